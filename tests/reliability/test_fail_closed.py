"""The rails fail closed: a loop that is paused, aborted, stopped by a guard or by tamper
evidence, or whose files were damaged, removed or locked, keeps its rails until the user's own
stop (or cancel, or resume). Only a clean `done` takes them off by itself. Through the real
launcher, as the host runs hooks.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import active_marker, rails_marker
from tests.conftest import edit_state, payload, run_launcher, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reliability.conftest import events_of, state_of, state_path

FORCE_PUSH = "git push --force origin main"


def launch(event: str, data: dict[str, object], cwd: Path) -> dict[str, object]:
    out = run_launcher(["hook", event, "--host", "claude"], json.dumps(data).encode(), cwd=cwd)
    assert out.code == 0, out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else {}


def denied(repo: Path, command: str = FORCE_PUSH, session: str = "sess-1") -> bool:
    data = payload("PreToolUse", repo, session, tool_name="Bash", tool_input={"command": command})
    specific = launch("PreToolUse", data, repo).get("hookSpecificOutput")
    return isinstance(specific, dict) and specific.get("permissionDecision") == "deny"


def markers(repo: Path) -> tuple[bool, bool]:
    return active_marker(repo).exists(), rails_marker(repo).exists()


@pytest.mark.parametrize(
    "status", ["paused", "aborted", "stopped_budget", "stopped_iteration_limit"]
)
def test_a_loop_that_left_running_keeps_its_rails_until_the_users_stop(
    planned: Path, capsys: pytest.CaptureFixture[str], status: str
) -> None:
    edit_state(planned, status=status, stop_reason="a guard")
    assert markers(planned) == (True, True)
    assert denied(planned)
    assert denied(planned, session="another-session")
    assert main(["-C", str(planned), "stop"]) == 0
    out = capsys.readouterr().out
    assert "rails" in out and "off" in out
    assert markers(planned) == (False, False)
    assert not denied(planned)


def test_a_clean_done_takes_the_rails_off(planned: Path, manager: FakeOpenAI) -> None:
    edit_state(planned, current_task="T2", completed_tasks=["T1"])
    manager.enqueue(verdict_body("done", done=True), schema="Verdict")
    answer = launch("Stop", payload("Stop", planned), planned)
    assert "done" in str(answer.get("systemMessage"))
    assert state_of(planned)["status"] == "done"
    assert markers(planned) == (False, False)
    assert not denied(planned)


def test_a_guard_stop_says_the_rails_stay_on(planned: Path) -> None:
    edit_state(planned, budget_used_usd=5.0)
    answer = launch("Stop", payload("Stop", planned), planned)
    assert state_of(planned)["status"] == "stopped_budget"
    assert "rails stay on until the user runs autopilot-codex stop" in str(answer["systemMessage"])
    assert denied(planned)


@pytest.mark.parametrize("damage", ["{torn", "", '{"status": "done"}', "[]"])
def test_a_damaged_state_never_switches_the_rails_off(planned: Path, damage: str) -> None:
    state_path(planned).write_text(damage)
    assert denied(planned)
    launch("Stop", payload("Stop", planned), planned)  # quarantines, or stops as tampered
    assert markers(planned) == (True, True)
    assert denied(planned)


def test_a_removed_state_keeps_the_rails(planned: Path) -> None:
    state_path(planned).unlink()
    launch("Stop", payload("Stop", planned), planned)
    assert denied(planned)


def test_a_held_state_lock_never_switches_the_rails_off(planned: Path) -> None:
    fd = os.open(state_path(planned).with_name("state.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert denied(planned)
        assert denied(planned, session="another-session")
    finally:
        os.close(fd)
    assert state_of(planned)["status"] == "running"


@pytest.mark.parametrize("which", ["active", "rails"])
def test_a_removed_marker_is_noticed_restored_and_logged(planned: Path, which: str) -> None:
    (active_marker if which == "active" else rails_marker)(planned).unlink()
    # The other index still guards the worktree, for any session; the hook restores the copy.
    assert denied(planned, session="another-session")
    assert markers(planned) == (True, True)
    # The active marker is under the keyed witness: its removal is tamper evidence, which
    # stops the loop (the rails stay); the second index's copy is simply put back.
    event = "state.tampered" if which == "active" else "rails.tampered"
    assert [e["event"] for e in events_of(planned)].count(event) == 1
    assert denied(planned)
    assert [e["event"] for e in events_of(planned)].count(event) == 1
    assert state_of(planned)["status"] == ("stopped" if which == "active" else "running")


def test_a_changed_marker_is_tamper_and_is_restored_from_the_state(planned: Path) -> None:
    marker = active_marker(planned)
    data = json.loads(marker.read_text())
    marker.write_text(json.dumps({**data, "session_id": "nested-session"}))
    launch(
        "PostToolUse", payload("PostToolUse", planned, "nested-session", tool_name="Read"), planned
    )
    assert json.loads(marker.read_text())["session_id"] == "sess-1"
    assert "state.tampered" in [e["event"] for e in events_of(planned)]
    assert state_of(planned)["status"] == "stopped"
    assert denied(planned)


def test_a_tamper_stop_keeps_the_rails_and_says_so(planned: Path) -> None:
    data = json.loads(state_path(planned).read_text())
    state_path(planned).write_text(json.dumps({**data, "budget_usd": 999.0}))
    answer = launch("Stop", payload("Stop", planned), planned)
    assert "rails stay on until you run stop" in str(answer["systemMessage"])
    assert state_of(planned)["status"] == "stopped"
    assert markers(planned) == (True, True)
    assert denied(planned)


def test_resume_keeps_the_rails_and_a_second_stop_is_harmless(
    planned: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_state(planned, status="paused", stop_reason="manager unavailable")
    assert main(["-C", str(planned), "resume"]) == 0
    assert markers(planned) == (True, True)
    assert main(["-C", str(planned), "stop"]) == 0
    assert main(["-C", str(planned), "stop"]) == 0
    assert "nothing to stop" in capsys.readouterr().out
    assert markers(planned) == (False, False)
