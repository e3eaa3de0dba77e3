"""The CLI subcommands behind the slash commands: plan, status, next, stop, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import active_dir, project_dir
from tests.conftest import (
    LAUNCHER,
    ROOT,
    edit_state,
    git,
    make_repo,
    payload,
    plan_body,
    run_launcher,
)
from tests.fakes.openai_server import FakeOpenAI, Reply


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_a_cap_of_one_iteration_is_said_in_the_singular(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "build", "it", "--max-iterations", "1")
    assert code == 0 and "at most 1 iteration, review mode" in out


def test_plan_prints_the_plan_and_first_contract(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(3), schema="Plan")
    code, out = run(
        capsys, "-C", str(repo), "plan", "build", "it", "--budget", "2.5", "--max-iterations", "7"
    )
    assert code == 0
    assert "loop started. Budget $2.50, at most 7 iterations" in out
    assert "  > T1: task number 1" in out and "    T3: task number 3" in out
    assert "Task T1 (1/3): task number 1" in out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["status"] == "running"
    assert state["base_sha"] == git(repo, "rev-parse", "HEAD")
    assert state["goal"] == "build it"
    assert (state["budget_usd"], state["max_iterations"]) == (2.5, 7)
    assert state["budget_used_usd"] > 0
    prompt = manager.requests[0].prompt_text
    assert "build it" in prompt and "README.md" in prompt


def test_plan_without_api_key_says_exactly_what_to_set(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    code, out = run(capsys, "-C", str(repo), "plan", "goal")
    assert code == 1
    assert "OPENAI_API_KEY is not set" in out
    assert not project_dir(repo).joinpath("state.json").exists()


def test_plan_outside_git_is_a_clear_error(
    tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out = run(capsys, "-C", str(plain), "plan", "goal")
    assert code == 1 and "not inside a git repository" in out
    assert manager.requests == []


def test_plan_without_goal_is_refused(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "-C", str(repo), "plan")
    assert code == 1 and "give a goal" in out


def test_plan_on_detached_head_and_empty_repo(
    tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "a").write_text("a")
    git(repo, "add", "a")
    git(repo, "commit", "-qm", "a")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    manager.enqueue(plan_body(), schema="Plan")
    assert run(capsys, "-C", str(repo), "plan", "goal")[0] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(empty), "plan", "goal")
    assert code == 0, out
    state = json.loads((project_dir(empty) / "state.json").read_text())
    assert state["base_sha"] == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def test_plan_refuses_while_a_loop_runs(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    run(capsys, "-C", str(repo), "plan", "first")
    code, out = run(capsys, "-C", str(repo), "plan", "second")
    assert code == 1 and "already running" in out
    assert len(manager.requests) == 1


def test_plan_failure_starts_no_loop(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "3")
    manager.enqueue(Reply(text="no"), Reply(text="still no"), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "goal")
    assert code == 1 and "could not plan" in out and "no loop started" in out
    assert not (project_dir(repo) / "state.json").exists()
    assert list(active_dir().iterdir()) == [] if active_dir().exists() else True


def test_args_stdin_keeps_quotes_and_flags(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    monkeypatch.setattr(
        sys, "stdin", io.StringIO("fix the user's --verbose flag `now` --budget 3\n")
    )
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "--args-stdin")
    assert code == 0, out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert state["budget_usd"] == 3.0
    assert "user's" in state["goal"] and "--verbose" in state["goal"] and "`now`" in state["goal"]


def test_status_next_stop_resume(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "-C", str(repo), "status")[1].startswith("autopilot-codex: no loop")
    assert json.loads(run(capsys, "-C", str(repo), "status", "--json")[1]) == {"status": "idle"}
    manager.enqueue(plan_body(2), schema="Plan")
    run(capsys, "-C", str(repo), "plan", "goal")
    code, out = run(capsys, "-C", str(repo), "status")
    assert "running" in out and "[>] T1" in out and "[ ] T2" in out
    assert "Iteration 0/30" in out and "of $5.00" in out and "session unclaimed" in out
    raw = run(capsys, "-C", str(repo), "status", "--json")[1]
    shown = json.loads(raw)
    stored = json.loads((project_dir(repo) / "state.json").read_text())
    assert shown.pop("spend")["total_usd"] == pytest.approx(stored["budget_used_usd"])
    assert shown == stored
    assert raw.startswith('{\n  "')  # indented for reading
    assert "Task T1 (1/2)" in run(capsys, "-C", str(repo), "next")[1]
    code, out = run(capsys, "-C", str(repo), "stop", "taking", "over")
    assert code == 0 and "loop stopped (taking over)" in out
    assert "stopped" in run(capsys, "-C", str(repo), "status")[1]
    assert "nothing to stop" in run(capsys, "-C", str(repo), "stop")[1]
    code, out = run(capsys, "-C", str(repo), "resume", "--session-id", "s2")
    assert code == 0 and "resumed" in out and "Task T1" in out
    state = json.loads((project_dir(repo) / "state.json").read_text())
    assert (state["status"], state["session_id"], state["generation"]) == ("running", "s2", 2)
    assert "already running" in run(capsys, "-C", str(repo), "resume")[1]


def test_resume_of_a_spent_budget_needs_a_larger_one(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    run(capsys, "-C", str(repo), "plan", "goal")
    edit_state(repo, status="stopped_budget", budget_used_usd=5.0)
    code, out = run(capsys, "-C", str(repo), "resume")
    assert code == 1 and "--budget" in out
    code, out = run(capsys, "-C", str(repo), "resume", "--budget", "8")
    assert code == 0


def test_launcher_runs_commands_with_the_configured_python(repo: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    result = run_launcher(["plan", "--args-stdin"], b"do the thing", cwd=repo)
    assert result.code == 0, result.stderr
    assert "loop started" in result.stdout
    assert "autopilot-codex" in run_launcher(["--version"]).stdout


def test_gate_imports_nothing_heavy_when_no_loop_here(tmp_path: Path, repo: Path) -> None:
    # A loop runs elsewhere, so the launcher's shell-only shortcut does not apply.
    other = make_repo(tmp_path / "other")
    marker = active_dir() / "other-0123"
    marker.parent.mkdir(parents=True)
    marker.write_text(json.dumps({"worktree": str(other), "session_id": None}))
    code = (
        "import sys, runpy\n"
        "sys.argv = ['autopilot_codex', 'hook', 'Stop']\n"
        "try:\n    runpy.run_module('autopilot_codex', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('pydantic', 'openai', 'git') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "bridge")}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload("Stop", repo)).encode(),
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.stdout.decode().strip().endswith("HEAVY="), proc.stdout + proc.stderr
    assert LAUNCHER.exists()


def test_requirements_match_pyproject() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    listed = [
        line.strip()
        for line in (ROOT / "bridge" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert listed == declared


def test_doctor_says_exactly_what_to_set_without_a_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    result = run_launcher(["doctor"], cwd=repo)
    assert result.code == 1
    assert "FIX  OPENAI_API_KEY is not set" in result.stdout
    assert "export OPENAI_API_KEY=sk-..." in result.stdout


def claude_on_path(tmp_path: Path) -> dict[str, str]:
    """A `claude` on PATH: doctor only looks it up, it never runs it."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "claude").write_text("#!/bin/sh\nexit 0\n")
    (shim / "claude").chmod(0o755)
    return {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}


def test_doctor_is_happy_when_all_is_set(repo: Path, tmp_path: Path, manager: FakeOpenAI) -> None:
    # `manager`: all set includes a manager that answers (doctor asks its model list).
    plugins = Path(os.environ["HOME"]) / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    record = {"version": 2, "plugins": {"autopilot-codex@autopilot-codex": [{"scope": "user"}]}}
    (plugins / "installed_plugins.json").write_text(json.dumps(record))
    result = run_launcher(["doctor"], cwd=repo, env=claude_on_path(tmp_path))
    assert result.code == 0, result.stdout
    assert "Ready." in result.stdout
    assert "FIX" not in result.stdout


def test_a_key_pasted_into_the_goal_is_not_stored(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import PLANTED_KEY

    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "use", PLANTED_KEY, "to", "call", "the", "api")
    assert code == 0
    assert PLANTED_KEY not in (project_dir(repo) / "state.json").read_text()
    assert PLANTED_KEY not in out
