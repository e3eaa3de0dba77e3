"""A run holds a driver-owned loop: every round's fresh session gets the rails through the real
hook command, a round's Stop is never blocked, and the loop is gone however the run ends."""

from __future__ import annotations

import io
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main
from autopilot_codex.paths import active_marker, project_dir
from autopilot_codex.rounds import driver
from autopilot_codex.rounds.driver import custody_for
from tests.conftest import LAUNCHER, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_rounds_driver import EXIT, READY, Script

RESET = {"event": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git reset --hard"}}
LS = {"event": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
STOP = {"event": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."}


@pytest.fixture
def hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds call the real launcher, with this interpreter as the bridge's Python."""
    monkeypatch.setenv("AUTOPILOT_CODEX_PYTHON", sys.executable)
    monkeypatch.setenv("FAKE_HOST_HOOK_CMD", shlex.quote(str(LAUNCHER)))


def answers(path: Path) -> list[dict[str, Any]]:
    lines = Path(f"{path}.hooks.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def drive(repo: Path, *args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main(
        ["add greetings", "--implementer", "claude", "--cwd", str(repo), "--json", *args],
        stdout=out,
    )
    return code, json.loads(out.getvalue())


def test_the_rails_guard_every_round_and_no_stop_is_blocked(
    repo: Path, script: Script, hooks: None
) -> None:
    path = script([{**READY, "hooks": [RESET, LS, STOP]}, {**EXIT, "hooks": [RESET, STOP]}])
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete")
    got = answers(path)
    assert [(a["call"], a["event"], a["code"]) for a in got] == [
        (1, "PreToolUse", 0),
        (1, "PreToolUse", 0),
        (1, "Stop", 0),
        (2, "PreToolUse", 0),
        (2, "Stop", 0),
    ]
    # Two fresh sessions (fake-1, fake-2), both denied the destructive command.
    for a in (got[0], got[3]):
        decision = json.loads(a["stdout"])["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", a
    assert got[1]["stdout"] == ""
    assert got[2]["stdout"] == "" and got[4]["stdout"] == ""
    assert not active_marker(repo).exists()
    state = state_of(repo)
    assert (state["style"], state["owner"], state["status"]) == ("rounds", "driver", "done")


def test_without_a_run_the_same_hook_is_silent(repo: Path, script: Script, hooks: None) -> None:
    # The control: the denial above comes from the held loop, not from the fake.
    import subprocess

    payload = {**RESET, "session_id": "x", "cwd": str(repo)}
    proc = subprocess.run(
        [str(LAUNCHER), "hook", "PreToolUse", "--host", "claude"],
        input=json.dumps(payload).encode(),
        capture_output=True,
    )
    assert (proc.returncode, proc.stdout) == (0, b"")


@pytest.mark.parametrize(
    ("raised", "status", "code"),
    [(KeyboardInterrupt, "stopped", 130), (RuntimeError, "aborted", None)],
)
def test_the_loop_is_released_on_ctrl_c_and_on_a_crash(
    repo: Path,
    script: Script,
    monkeypatch: pytest.MonkeyPatch,
    raised: type[BaseException],
    status: str,
    code: int | None,
) -> None:
    script([READY, EXIT])
    seen: list[bool] = []

    def boom(*args: object, **kwargs: object) -> None:
        seen.append(active_marker(repo).exists())
        raise raised("boom")

    monkeypatch.setattr(driver, "run_round", boom)
    out = io.StringIO()
    argv = ["g", "--implementer", "claude", "--cwd", str(repo), "--json"]
    if code is None:
        with pytest.raises(RuntimeError):
            main(argv, stdout=out)
    else:
        assert main(argv, stdout=out) == code
    assert seen == [True]
    assert not active_marker(repo).exists()
    assert state_of(repo)["status"] == status


def test_a_run_is_refused_while_a_ralph_loop_runs(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    path = script([READY, EXIT])
    assert cli_main(["-C", str(repo), "ralph", "--session-id", "s1", "do", "it"]) == 0
    capsys.readouterr()
    assert main(["g", "--implementer", "claude", "--cwd", str(repo)]) == 1
    assert "a ralph loop is already running" in capsys.readouterr().err
    assert not Path(f"{path}.calls.jsonl").exists()
    assert state_of(repo)["style"] == "ralph"
    assert not custody_for(repo).path.exists()


def test_ralph_is_refused_while_a_run_holds_the_loop(repo: Path) -> None:
    from autopilot_codex.commands.ralph import ralph
    from autopilot_codex.errors import BridgeError
    from autopilot_codex.rounds.hold import hold

    with hold(repo, "g", "run-1", 3) as held:
        with pytest.raises(BridgeError, match="a rounds loop is already running"):
            ralph(
                cwd=repo,
                prompt="p",
                prompt_file=None,
                max_iterations=None,
                completion_promise=None,
                budget_usd=None,
                session_id="s",
            )
        held.status, held.why = "complete", "ok"
    assert state_of(repo)["status"] == "done"


def test_the_cli_passes_run_through_to_the_driver(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    script([READY, EXIT])
    code = cli_main(
        ["-C", str(repo), "run", "add", "greetings", "--implementer", "claude", "--json"]
    )
    record = json.loads(capsys.readouterr().out)
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 2)


def test_the_manager_verdict_decides_and_is_charged(
    repo: Path, script: Script, manager: FakeOpenAI
) -> None:
    again = {"say": "Looked again.\n::potter(ready)"}
    script([READY, EXIT, again, EXIT])
    manager.enqueue(verdict_body("continue"), verdict_body("done"), schema="Verdict")
    code, record = drive(repo, "--manager", "openai")
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 4)
    requests = manager.requests
    assert len(requests) == 2
    assert "add greetings" in json.dumps(requests[0].body)
    assert "hello.txt" in json.dumps(requests[0].body)
    # Four rounds at $0.01 each, plus what the two manager calls cost.
    assert record["cost_usd"] > 0.04


def test_a_budget_that_cannot_cover_the_manager_accepts_no_exit(
    repo: Path, script: Script, manager: FakeOpenAI
) -> None:
    script([READY, EXIT, READY, EXIT])
    code, record = drive(repo, "--manager", "openai", "--budget", "0.025")
    assert (code, record["status"]) == (2, "budget")
    assert manager.requests == []


def test_a_loop_whose_driver_was_killed_does_not_block_the_next_run(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    from autopilot_codex.store import Store

    script([READY, EXIT])
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    from autopilot_codex.rounds.hold import hold

    with hold(repo, "g", "run-0", 2) as held:
        held.status = "complete"
        store = Store(repo)
        state = store.load(with_plan=False)
        assert state is not None and state.session_id == f"driver-pid:{os.getpid()}"
        # As if that driver had been SIGKILLed mid-run: running, marker present, process gone.
        store.save(state.evolve(session_id=f"driver-pid:{dead.stdout.strip()}"))
        assert cli_main(["-C", str(repo), "status"]) == 0
        assert "rounds run running — g" in capsys.readouterr().out
        code, record = drive(repo)
        assert (code, record["status"]) == (0, "complete")
    events = [
        json.loads(x)["event"]
        for x in (project_dir(repo) / "events.jsonl").read_text().splitlines()
    ]
    assert "rounds.orphaned" in events


def test_a_live_driver_loop_is_not_taken_over(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    from autopilot_codex.rounds.hold import hold

    script([READY, EXIT])
    with hold(repo, "g", "run-0", 2) as held:
        held.status = "complete"
        assert main(["g", "--implementer", "claude", "--cwd", str(repo)]) == 1
        assert "a rounds loop is already running" in capsys.readouterr().err


def test_resume_refuses_loops_of_other_styles(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["-C", str(repo), "ralph", "--session-id", "s", "p"]) == 0
    assert cli_main(["-C", str(repo), "cancel"]) == 0
    capsys.readouterr()
    assert cli_main(["-C", str(repo), "resume"]) == 1
    assert "was a ralph loop; start it again with autopilot-codex ralph" in capsys.readouterr().out
    assert not active_marker(repo).exists()
