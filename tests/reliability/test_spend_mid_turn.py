"""The attack: an implementer that never ends its turn. The budget was checked only at a Stop,
so an implementer that goes on calling tools (each call another paid answer of its model)
spent without end: each PostToolUse charged the meter, past the budget and on, and said
nothing. Played through the real PostToolUse hook, for both styles: the tool call that takes
the meter to the budget ends the loop and tells the host to end its
turn (`continue: false`), which both hosts obey after a tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import edit_payload, state_of
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_spend_records import Capsys, claude_message, hook, ralph
from tests.reliability.conftest import start_loop


def after_a_tool(repo: Path, transcript: Path) -> dict[str, Any]:
    data = edit_payload(repo)
    data["transcript_path"] = str(transcript)
    return data


def halted(stdout: str) -> dict[str, Any]:
    answer = json.loads(stdout)
    assert answer["continue"] is False, answer
    return dict(answer)


def test_a_ralph_loop_ends_the_turn_that_spends_its_budget(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "sess-1.jsonl"
    claude_message(transcript, "m1", 10_000)  # $0.15: under the budget, the turn goes on
    assert (
        hook("PostToolUse", after_a_tool(repo, transcript), capsys, monkeypatch, "claude").stdout
        == ""
    )
    claude_message(transcript, "m2", 30_000)  # $0.45 more: $0.60 of $0.50
    run = hook("PostToolUse", after_a_tool(repo, transcript), capsys, monkeypatch, "claude")
    answer = halted(run.stdout)
    assert "budget" in answer["stopReason"]
    assert state_of(repo)["status"] == "stopped_budget"


def test_an_autopilot_loop_ends_the_turn_that_spends_its_budget(
    repo: Path,
    manager: FakeOpenAI,
    capsys: Capsys,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    start_loop(repo, manager, capsys, "--budget", "1.00", "--review", "off")
    transcript = tmp_path / "sess-1.jsonl"
    claude_message(transcript, "m1", 70_000)  # $1.05 with the plan's call: past $1.00
    run = hook("PostToolUse", after_a_tool(repo, transcript), capsys, monkeypatch, "claude")
    answer = halted(run.stdout)
    assert "budget" in answer["stopReason"]
    assert state_of(repo)["status"] == "stopped_budget"


def test_a_ralph_loop_ends_the_turn_that_passes_its_token_cap(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The other caps alike: a turn that never ends would go on past a token cap too."""
    ralph(capsys, repo, "--max-iterations", "50", "--max-tokens", "20000")
    transcript = tmp_path / "sess-1.jsonl"
    claude_message(transcript, "m1", 30_000)
    run = hook("PostToolUse", after_a_tool(repo, transcript), capsys, monkeypatch, "claude")
    answer = halted(run.stdout)
    assert "token limit" in answer["stopReason"]
    assert state_of(repo)["status"] == "stopped_tokens"
