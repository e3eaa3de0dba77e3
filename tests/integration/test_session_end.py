"""A session that ends while its loop still runs: the owner's SessionEnd, through the real hook
launcher, records `session.ended` once, tells the user once, and `status` says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import plan_body, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .notify_helpers import cli, hook, notifier, plan, told_events

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")


def ledger(repo: Path) -> list[str]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [json.loads(line)["event"] for line in lines]


def status(capsys: pytest.CaptureFixture[str], repo: Path) -> str:
    from autopilot_codex.cli import main

    assert main(["-C", str(repo), "status"]) == 0
    return capsys.readouterr().out


def test_the_owners_session_end_is_recorded_told_and_shown_once(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    told = notifier(isolated, tmp_path)
    plan(repo, manager, capsys)
    assert "Session ended" not in status(capsys, repo)
    # Another session ending in the worktree is nothing to the loop.
    hook(repo, "SessionEnd", session="someone-else", reason="other")
    assert "session.ended" not in ledger(repo)
    assert hook(repo, "SessionEnd", reason="prompt_input_exit").stdout == ""
    hook(repo, "SessionEnd", reason="prompt_input_exit")
    assert ledger(repo).count("session.ended") == 1
    assert state_of(repo)["status"] == "running"
    text = status(capsys, repo)
    assert "Session ended: sess-1 (prompt_input_exit)" in text and "without a Stop" in text
    (event,) = told_events(isolated, told)
    assert (event["event"], event["reason"], event["session"]) == (
        "session.ended",
        "prompt_input_exit",
        "sess-1",
    )
    # Handed to a new session, the loop no longer reads as orphaned.
    cli(capsys, "-C", str(repo), "resume", "--session-id", "sess-2")
    assert "Session ended" not in status(capsys, repo)


def test_a_session_that_ended_its_loop_first_records_nothing(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    told = notifier(isolated, tmp_path)
    manager.enqueue(plan_body(1), schema="Plan")
    cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    manager.enqueue(verdict_body("abort"), schema="Verdict")
    hook(repo, "Stop")
    hook(repo, "SessionEnd", reason="other")
    assert "session.ended" not in ledger(repo)
    assert [e["event"] for e in told_events(isolated, told)] == ["loop.transition"]


def test_the_implementer_cannot_end_its_own_session_by_hand(
    isolated: Path, repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forged SessionEnd from the implementer's shell would only raise a false alarm; the
    rails refuse the launcher's `hook` verb all the same."""
    plan(repo, manager, capsys)
    forged = "echo '{}' | autopilot-codex hook SessionEnd --host claude"
    run = hook(repo, "PreToolUse", tool_name="Bash", tool_input={"command": forged})
    assert run.json["hookSpecificOutput"]["permissionDecision"] == "deny"
