"""The attack: spend Claude Code records in usage fields beyond the four token counts, which a
reader of those four never charges. Web searches are billed per search ($10 per 1,000), apart
from tokens, and the implementer runs as many as it likes; cache writes at the one-hour rate
cost twice the input price, not the five-minute 1.25 times. Played through the real Stop
hook: both are charged at Anthropic's rates."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import payload, state_of
from tests.integration.test_spend_records import Capsys, hook, ralph


def message(record: Path, message_id: str, usage: dict[str, Any]) -> None:
    """One Sonnet 4 message ($3 input, $3.75 five-minute cache write per million tokens)."""
    line = {
        "type": "assistant",
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        "message": {"id": message_id, "model": "claude-sonnet-4-5", "usage": usage},
    }
    with record.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def test_web_searches_and_hour_long_cache_writes_are_charged(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "5.00")
    transcript = tmp_path / "sess-1.jsonl"
    searching = {"input_tokens": 10, "server_tool_use": {"web_search_requests": 300}}
    message(transcript, "m1", searching)  # $3.00 of searches, $0.00003 of tokens
    caching = {
        "cache_creation_input_tokens": 1_000_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1_000_000},
    }
    message(transcript, "m2", caching)  # $6.00 at the one-hour rate, not $3.75
    hook(
        "Stop",
        payload("Stop", repo, transcript_path=str(transcript)),
        capsys,
        monkeypatch,
        "claude",
    )
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(9.00003)
    assert state["status"] == "stopped_budget"
