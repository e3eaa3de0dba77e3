"""The attack: a compaction's call is spend the transcript holds no usage for. Claude Code
summarises the conversation (its whole context as input) when the context fills, or when
asked, and writes only a `compact_boundary` line naming how many tokens it summarised
(`compactMetadata.preTokens`) and how many the summary holds (`postTokens`). An implementer
that fills its context (reading large files) makes Claude Code compact again and again, each
time unseen by a reader of usage lines. Played through the real Stop hook: each compaction is
charged at its ceiling, the tokens summarised at the input price and the summary at the output
price of the model the record last named."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import payload, state_of
from tests.integration.test_spend_records import Capsys, hook, ralph


def write(record: Path, line: dict[str, Any]) -> None:
    line["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    with record.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def compacted(record: Path, before: int, after: int) -> None:
    """The line Claude Code 2.1.332 writes for a compaction (`Bcn`), its summary's size set."""
    metadata = {"trigger": "auto", "preTokens": before, "postTokens": after}
    write(record, {"type": "system", "subtype": "compact_boundary", "compactMetadata": metadata})


def test_each_compaction_is_charged(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "5.00")
    transcript = tmp_path / "sess-1.jsonl"
    message = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 10}}
    write(transcript, {"type": "assistant", "message": message})  # $0.00003
    stop = payload("Stop", repo, transcript_path=str(transcript))
    hook("Stop", stop, capsys, monkeypatch, "claude")
    # Sonnet 4: 150,000 tokens in at $3 and 10,000 out at $15 a million: $0.60 each.
    for _ in range(3):
        compacted(transcript, 150_000, 10_000)
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(1.80003)
    assert state["implementer_tokens"] == 480_010


def test_a_compaction_before_any_message_is_priced_at_the_dearest_row(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "5.00")
    transcript = tmp_path / "sess-1.jsonl"
    compacted(transcript, 100_000, 0)  # Opus 4.1's $15 a million input: $1.50
    hook(
        "Stop",
        payload("Stop", repo, transcript_path=str(transcript)),
        capsys,
        monkeypatch,
        "claude",
    )
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(1.50)
