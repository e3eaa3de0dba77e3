"""A manager that says `continue` after the last planned task was accepted, with no new task:
each such verdict buys an implementer turn with nothing to do (issue 36). It is asked once
more for a task or `done`, in the same Stop; a second such answer pauses the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    Hook,
    edit_payload,
    git,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import verdict_requests


def last_task_done(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """One planned task, written and committed; the Stop's manager accepts it."""
    manager.enqueue(plan_body(1), schema="Plan")
    assert (
        main(["-C", str(repo), "plan", "--review", "stop", "--session-id", "sess-1", "goal"]) == 0
    )
    capsys.readouterr()
    (repo / "file1.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feat: file1")
    hook("PostToolUse", edit_payload(repo))
    return hook("Stop", payload("Stop", repo)).json


def test_a_continue_with_nothing_left_is_asked_again_then_pauses(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), verdict_body("continue"), schema="Verdict")
    out = last_task_done(repo, manager, hook, capsys)
    state = state_of(repo)
    assert (state["status"], state["autopilot"]["completed_tasks"]) == ("paused", ["T1"]), out
    assert state["stop_reason"].startswith("nothing left to do: all 1 planned task accepted")
    assert "decision" not in out  # no implementer turn bought
    asked = verdict_requests(manager)
    assert len(asked) == 2
    assert "every planned task has been accepted" in asked[1].prompt_text
    assert "every planned task has been accepted" not in asked[0].prompt_text


def test_asked_again_the_manager_may_say_done(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), verdict_body("done"), schema="Verdict")
    last_task_done(repo, manager, hook, capsys)
    assert state_of(repo)["status"] == "done"
    assert len(verdict_requests(manager)) == 2


def test_a_continue_that_names_the_next_work_runs_on(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(
        verdict_body("continue", done=True, instructions="add a changelog entry"), schema="Verdict"
    )
    out = last_task_done(repo, manager, hook, capsys)
    assert out["decision"] == "block" and "add a changelog entry" in out["reason"]
    assert state_of(repo)["status"] == "running"
    assert len(verdict_requests(manager)) == 1
