"""Compaction and resume: a context-making stop is never blocked, and the task comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import git, payload, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import Hook, answer_of, events_of, state_of


@pytest.fixture
def continuing(planned: Path, manager: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A loop whose manager would block every judged Stop."""
    monkeypatch.setenv("AUTOPILOT_CODEX_NO_PROGRESS_LIMIT", "100")
    manager.default = Reply(body=verdict_body("continue"))
    return planned


@pytest.mark.parametrize("trigger", ["auto", "manual"])
@pytest.mark.parametrize("stop_hook_active", [False, True])
def test_precompact_then_stop_is_never_blocked_and_costs_no_call(
    continuing: Path, manager: FakeOpenAI, hook: Hook, trigger: str, stop_hook_active: bool
) -> None:
    calls = len(manager.requests)
    # Several compactions in a row: the loop must never spin on a full context.
    for _ in range(3):
        assert hook("PreCompact", payload("PreCompact", continuing, trigger=trigger)).stdout == ""
        stop = hook("Stop", payload("Stop", continuing, stop_hook_active=stop_hook_active))
        assert (stop.code, stop.stdout) == (0, "")
        assert events_of(continuing)[-1]["event"] == "stop.after_compaction"
    assert len(manager.requests) == calls
    state = state_of(continuing)
    assert (state["status"], state["compaction_pending"], state["iteration"]) == (
        "running",
        False,
        0,
    )
    # The pass is for the one stop after a compaction: the next stop is judged again.
    assert answer_of(hook("Stop", payload("Stop", continuing)))["decision"] == "block"
    assert len(manager.requests) == calls + 1


def test_a_tool_run_after_compaction_means_work_resumed(
    continuing: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    hook("PreCompact", payload("PreCompact", continuing, trigger="auto"))
    hook("PostToolUse", payload("PostToolUse", continuing, tool_name="Read"))
    assert answer_of(hook("Stop", payload("Stop", continuing)))["decision"] == "block"


def test_precompact_from_another_session_grants_no_pass(
    continuing: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    hook("PreCompact", payload("PreCompact", continuing, session="intruder", trigger="auto"))
    assert state_of(continuing)["compaction_pending"] is False
    assert answer_of(hook("Stop", payload("Stop", continuing)))["decision"] == "block"


@pytest.mark.parametrize("source", ["compact", "resume", "clear"])
def test_session_start_reinjects_the_current_task_contract(
    continuing: Path, manager: FakeOpenAI, hook: Hook, source: str
) -> None:
    calls = len(manager.requests)
    out = answer_of(hook("SessionStart", payload("SessionStart", continuing, source=source)))
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "SessionStart"
    assert "Task T1 (1/2): task number 1" in specific["additionalContext"]
    assert "file1.txt exists" in specific["additionalContext"]  # the acceptance criteria
    assert "decision" not in out
    assert len(manager.requests) == calls


def test_session_start_follows_the_task_the_manager_moved_to(
    continuing: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (continuing / "file1.txt").write_text("one\n")
    git(continuing, "add", "file1.txt")
    git(continuing, "commit", "-q", "-m", "feat: file1")
    # The Stop reviews the final diff first (edit mode), then asks for the verdict.
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    hook("Stop", payload("Stop", continuing))
    assert state_of(continuing)["autopilot"]["current_task"] == "T2"
    out = answer_of(hook("SessionStart", payload("SessionStart", continuing, source="compact")))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Task T2 (2/2): task number 2" in context
    assert "Task T1" not in context


@pytest.mark.parametrize(
    ("source", "session"), [("startup", "sess-1"), ("compact", "intruder"), ("compact", "")]
)
def test_session_start_says_nothing_when_it_should_not(
    continuing: Path, hook: Hook, source: str, session: str
) -> None:
    data = payload("SessionStart", continuing, session=session, source=source)
    assert hook("SessionStart", data).stdout == ""


def test_session_start_after_resume_of_a_paused_loop_reinjects_the_task(
    continuing: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(Reply(status=429, error_code="insufficient_quota"), schema="Verdict")
    hook("Stop", payload("Stop", continuing))
    assert state_of(continuing)["status"] == "paused"
    assert hook("SessionStart", payload("SessionStart", continuing, source="resume")).stdout == ""
    assert main(["-C", str(continuing), "resume", "--session-id", "sess-1"]) == 0
    capsys.readouterr()
    out = answer_of(hook("SessionStart", payload("SessionStart", continuing, source="resume")))
    assert "Task T1 (1/2)" in out["hookSpecificOutput"]["additionalContext"]
