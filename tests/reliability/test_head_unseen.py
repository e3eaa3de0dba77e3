"""What the manager approves is the work tree; what a task's end hands on is HEAD (the next
task's base, the loop's result). An implementer that commits a change and takes it out of the
work tree before the Stop has the manager approve a tree without it: moving the base to that
HEAD, or ending the loop there, would pass a change no review ever showed. The bridge's own
look at HEAD against the work tree overrules such a `done` or task advance, as a red check
does, until what is committed is what was reviewed."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    Hook,
    git,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI

HIDDEN = "HIDDEN-PAYLOAD-never-reviewed"


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    capsys.readouterr()
    return repo


def _sent(manager: FakeOpenAI) -> str:
    return "\n".join(r.raw_body for r in manager.requests)


def _commit_hidden_then_take_it_out(repo: Path, task_file: str) -> None:
    (repo / task_file).write_text(f"{task_file}\n")
    (repo / "hidden.py").write_text(f"print('{HIDDEN}')\n")
    git(repo, "add", task_file, "hidden.py")
    git(repo, "commit", "-q", "-m", f"feat: {task_file}")
    (repo / "hidden.py").unlink()  # the work tree the manager reviews has no hidden.py


@pytest.mark.parametrize("verdict", ["task-done", "done"])
def test_a_change_committed_and_taken_out_of_the_tree_never_passes_unseen(
    planned: Path, manager: FakeOpenAI, hook: Hook, verdict: str
) -> None:
    _commit_hidden_then_take_it_out(planned, "file1.txt")
    manager.enqueue(review_body("approve"), schema="Review")
    if verdict == "done":
        manager.enqueue(verdict_body("done"), schema="Verdict")
    else:
        manager.enqueue(verdict_body("continue", done=True), schema="Verdict")

    out = hook("Stop", payload("Stop", planned)).json

    assert HIDDEN not in _sent(manager)  # the manager approved a tree without it
    state = state_of(planned)
    # Neither the loop's end nor the next task's base may take that HEAD as reviewed.
    assert state["status"] == "running", out
    assert state["autopilot"]["completed_tasks"] == [], state["autopilot"]
    assert out.get("decision") == "block" and "hidden.py" in out["reason"], out

    # Put back into the tree, the change is in the next review's diff.
    git(planned, "checkout", "--", "hidden.py")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    hook("Stop", payload("Stop", planned))
    assert HIDDEN in _sent(manager)
    assert state_of(planned)["autopilot"]["completed_tasks"] == ["T1"]


def test_uncommitted_work_that_head_lacks_still_advances(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    """The control: a new file left uncommitted beside the task's commit, or an edit to a file
    no commit of the task changed, hides nothing (HEAD holds there what the task's base held),
    and the task advances as before."""
    (planned / "file1.txt").write_text("file1.txt\n")
    git(planned, "add", "file1.txt")
    git(planned, "commit", "-q", "-m", "feat: file1.txt")
    (planned / "notes.txt").write_text("scratch\n")
    (planned / "README.md").write_text("# an edit left uncommitted\n")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    hook("Stop", payload("Stop", planned))
    assert state_of(planned)["autopilot"]["completed_tasks"] == ["T1"]
