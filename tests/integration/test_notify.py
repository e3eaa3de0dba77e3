"""A word to the user from the hook that makes a transition: the user's `notify_command` gets
one JSON event on stdin per transition out of `running`, through the real hook launcher, and
a notifier that fails or hangs never costs a hook its answer."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import review_body, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .notify_helpers import cli, helpers, hook, notifier, plan, told_events

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")

QUESTION = {
    "questions": [
        {
            "question": "Which storage should the cache use?",
            "options": [{"label": "SQLite"}, {"label": "JSON files"}],
        }
    ]
}


@pytest.mark.parametrize(("decision", "status"), [("done", "done"), ("abort", "aborted")])
def test_a_verdict_that_ends_the_loop_is_told_once(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    decision: str,
    status: str,
) -> None:
    told = notifier(isolated, tmp_path)
    plan(repo, manager, capsys)
    manager.enqueue(verdict_body(decision), schema="Verdict")
    hook(repo, "Stop")
    assert state_of(repo)["status"] == status
    # The loop's later hooks change nothing, and tell nothing.
    hook(repo, "Stop")
    hook(repo, "PostToolUse", tool_name="Bash", tool_input={"command": "ls"})
    (event,) = told_events(isolated, told)
    assert event["event"] == "loop.transition"
    assert (event["from"], event["status"], event["via"]) == ("running", status, "Stop")
    assert event["worktree"] == str(repo) and event["session"] == "sess-1"
    assert event["style"] == "autopilot"


def test_a_guard_stop_and_a_question_left_to_the_user_are_each_told(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    told = notifier(isolated, tmp_path)
    cli(capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "--max-iterations", "1", "go")
    hook(repo, "Stop", last_assistant_message="Working.")
    assert state_of(repo)["status"] == "stopped_iteration_limit"
    cli(capsys, "-C", str(repo), "cancel")
    plan(repo, manager, capsys)
    manager.enqueue(
        {"answer": "ASK_THE_USER: a matter of taste", "confidence": "high", "plan_change": None},
        schema="Consultation",
    )
    hook(repo, "PreToolUse", tool_name="AskUserQuestion", tool_input=QUESTION)
    assert state_of(repo)["status"] == "paused"
    # The user's own commands are not told back to them.
    cli(capsys, "-C", str(repo), "stop")
    events = told_events(isolated, told)
    assert [(e["style"], e["status"], e["via"]) for e in events] == [
        ("ralph", "stopped_iteration_limit", "Stop"),
        ("autopilot", "paused", "PreToolUse"),
    ]
    assert "Which storage should the cache use?" in events[1]["reason"]


@pytest.mark.parametrize(
    "body", ["sys.exit(3)\n", "import time\ntime.sleep(3600)\n"], ids=["fails", "hangs"]
)
def test_a_failing_or_hanging_notifier_never_holds_the_hook(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    body: str,
) -> None:
    told = notifier(isolated, tmp_path, body)
    plan(repo, manager, capsys)
    manager.enqueue(verdict_body("done"), schema="Verdict")
    run = hook(repo, "Stop")
    assert "done" in run.json["systemMessage"]
    assert state_of(repo)["status"] == "done"
    # The hook has answered; the notifier got its event all the same.
    while not (told.exists() and told.read_text().endswith("\n")):
        time.sleep(0.05)
    assert json.loads(told.read_text())["status"] == "done"
    if "exit" in body:
        told_events(isolated, told)
        log = (isolated / "logs" / "notify.log").read_text()
        assert "exit 3" in log
    else:
        # The helper leads a process group of its own, with the notifier in it.
        for pid in helpers(isolated):
            os.killpg(pid, 9)
    assert not (isolated / "logs" / "bridge.log").exists()


def plant(folder: Path, name: str, marker: Path) -> Path:
    """A program the implementer could write: it leaves a file when run."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    return program


def test_no_notifier_is_taken_from_a_path_the_implementer_can_write(
    isolated: Path,
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A `notify-send` in the worktree on the hook's PATH, and a `notify_command` named without
    a path that the worktree (or `.` on PATH) also holds, are never run by a hook."""
    marker = tmp_path / "ran"
    planted = repo / "node_modules" / ".bin"
    plant(planted, "notify-send", marker)
    plant(planted, "notify-me", marker)
    plant(repo, "notify-me", marker)
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(json.dumps({"notify_command": ["notify-me"]}))
    plan(repo, manager, capsys)
    # The planted files are a change of the worktree: reviewed at the Stop.
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    path = f"{planted}:.:{os.environ['PATH']}"
    hook(repo, "Stop", env={"PATH": path})
    assert state_of(repo)["status"] == "done", state_of(repo)["stop_reason"]
    told_events(isolated, tmp_path / "unused")
    assert not marker.exists()
    assert "notify-me" in (isolated / "logs" / "notify.log").read_text()
