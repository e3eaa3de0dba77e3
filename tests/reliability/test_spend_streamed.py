"""The attack: Claude Code streams one message onto several transcript lines sharing its id,
and only the later lines carry the real output count (the first holds a placeholder, 1 or a
few tokens). A reader that keeps a message's first line counts almost none of its output,
the dearest kind, so an implementer that writes long answers (a file through the Write tool
is output) spends many times the budget before the loop stops. Played through the real Stop
hook: each message is charged at its highest line, also when its lines straddle two looks,
and never twice."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import payload, state_of
from tests.integration.test_spend_records import Capsys, hook, ralph


def streamed(record: Path, message_id: str, outputs: list[int], cost: float | None = None) -> None:
    """One Sonnet 4 message ($15 per million output tokens) written as Claude Code streams
    it: a line per content block, the same id and input on each, the output growing."""
    with record.open("a") as handle:
        for output in outputs:
            line: dict[str, object] = {
                "type": "assistant",
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                "message": {
                    "id": message_id,
                    "model": "claude-sonnet-4-5",
                    "usage": {"input_tokens": 3, "output_tokens": output},
                },
            }
            if cost is not None:
                line["costUSD"] = cost * output / outputs[-1]
            handle.write(json.dumps(line) + "\n")


def test_a_streamed_message_is_charged_its_whole_output(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "5.00")
    transcript = tmp_path / "sess-1.jsonl"
    streamed(transcript, "m1", [1, 1, 40_000])  # $0.60, not $0.000015
    stop = payload("Stop", repo, transcript_path=str(transcript))
    hook("Stop", stop, capsys, monkeypatch, "claude")
    assert state_of(repo)["implementer_used_usd"] == pytest.approx(0.60, abs=1e-4)
    # A message whose later lines land after the look: the rest of its output counts then,
    # the part already counted does not count again.
    streamed(transcript, "m2", [1, 8])
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    streamed(transcript, "m2", [20_000, 20_000])  # $0.30 in all
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.90, abs=1e-4)
    assert state["implementer_tokens"] == 60_006
    # Where Claude Code priced each line itself, the message's highest figure counts, once.
    streamed(transcript, "m3", [1, 30_000], cost=0.45)
    hook("Stop", dict(stop, stop_hook_active=True), capsys, monkeypatch, "claude")
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(1.35, abs=1e-4)


def test_a_streamed_message_past_the_budget_ends_the_loop(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "sess-1.jsonl"
    streamed(transcript, "m1", [1, 1, 40_000])  # $0.60
    hook(
        "Stop",
        payload("Stop", repo, transcript_path=str(transcript)),
        capsys,
        monkeypatch,
        "claude",
    )
    assert state_of(repo)["status"] == "stopped_budget"
