"""The autopilot's small hooks (a session start, a compaction, a failed tool) act for the
loop's own session only, and for a running loop with a task to show: through the real hook
entry point, in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import Hook, edit_state, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    capsys.readouterr()
    return repo


def ledger(repo: Path) -> bytes:
    return (project_dir(repo) / "events.jsonl").read_bytes()


@pytest.mark.parametrize("case", ["another session", "a paused loop"])
def test_the_small_hooks_of_another_session_or_a_paused_loop_change_nothing(
    planned: Path, hook: Hook, case: str
) -> None:
    session = "other" if case == "another session" else "sess-1"
    if case == "a paused loop":  # its rails stay on: the hooks reach the loop, which waits
        edit_state(planned, status="paused", stop_reason="a question for the user")
    before, events = state_of(planned), ledger(planned)
    failed = payload(
        "PostToolUseFailure", planned, session, tool_name="Bash", tool_input={"command": "x"}
    )
    for event, data in [
        ("SessionStart", payload("SessionStart", planned, session, source="resume")),
        ("PreCompact", payload("PreCompact", planned, session, trigger="auto")),
        ("PostToolUseFailure", failed),
    ]:
        assert hook(event, data).stdout == "", event
    assert state_of(planned) == before and ledger(planned) == events


def test_the_owners_compaction_is_counted_and_recorded(planned: Path, hook: Hook) -> None:
    assert hook("PreCompact", payload("PreCompact", planned, trigger="auto")).stdout == ""
    assert json.loads(ledger(planned).splitlines()[-1])["event"] == "compact"


@pytest.mark.parametrize("source", ["compact", "resume", "clear"])
def test_a_session_start_of_a_stopped_loop_says_nothing(
    planned: Path, hook: Hook, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    assert main(["-C", str(planned), "stop"]) == 0
    capsys.readouterr()
    events = ledger(planned)
    assert hook("SessionStart", payload("SessionStart", planned, source=source)).stdout == ""
    assert ledger(planned) == events


def test_a_session_start_without_a_current_task_recalls_none(planned: Path, hook: Hook) -> None:
    edit_state(planned, current_task=None, completed_tasks=["T1", "T2"])
    run = hook("SessionStart", payload("SessionStart", planned, source="compact"))
    assert run.stdout == ""
    # Still the owner's session starting again: recorded, with nothing to put back.
    assert json.loads(ledger(planned).splitlines()[-1])["event"] == "session.context"


def test_an_event_the_autopilot_does_not_handle_is_allowed_untouched(
    planned: Path, hook: Hook
) -> None:
    before, events = state_of(planned), ledger(planned)
    run = hook("SubagentStop", payload("SubagentStop", planned))
    assert (run.code, run.stdout) == (0, "")
    assert state_of(planned) == before and ledger(planned) == events
