"""The rough edges a new user hit: install and doctor tell the truth, --help never runs a
command, messages name the entry point the reader has, resume never ignores its flags, status
says what to do next, and one Python environment serves install and the hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import active_dir
from autopilot_codex.store import Store
from tests.conftest import LAUNCHER, ROOT, make_repo, payload, plan_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    code, out = run(capsys, "-C", str(repo), "plan", "build", "it")
    assert code == 0, out


def recording_claude(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `claude` on PATH that only records that it was run."""
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    log = tmp_path / "claude-calls.log"
    (shim / "claude").write_text(f'#!/bin/sh\necho "$@" >>"{log}"\nexit 0\n')
    (shim / "claude").chmod(0o755)
    return {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}, log


# -- 3: install and doctor ------------------------------------------------------------------


def test_install_without_claude_is_an_error(tmp_path: Path) -> None:
    bare = "/usr/bin:/bin"
    assert not any(Path(d, "claude").exists() for d in bare.split(":"))
    result = run_launcher(["install"], cwd=tmp_path, env={"PATH": bare})
    assert result.code == 1
    assert "'claude' is not on PATH" in result.stderr
    assert "Ready." not in result.stdout


def test_doctor_fixes_a_missing_claude_and_never_says_ok_to_a_negative(tmp_path: Path) -> None:
    result = run_launcher(["doctor"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert result.code == 1
    assert "FIX  `claude` is not on PATH" in result.stdout
    assert "Not ready" in result.stdout and "Ready." not in result.stdout
    for line in result.stdout.splitlines():
        assert not (line.startswith("ok") and " not " in line), line


# -- 4: help --------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["install", "bootstrap", "hook"])
def test_help_prints_usage_and_runs_nothing(tmp_path: Path, verb: str) -> None:
    env, log = recording_claude(tmp_path)
    result = run_launcher([verb, "--help"], cwd=tmp_path, env=env)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith(f"usage: autopilot-codex {verb}")
    assert not log.exists()  # install did not reach Claude Code


def test_top_level_help_lists_every_command_and_defaults(tmp_path: Path) -> None:
    top = run_launcher(["--help"], cwd=tmp_path).stdout
    for verb in (
        "plan",
        "status",
        "next",
        "stop",
        "resume",
        "doctor",
        "install",
        "bootstrap",
    ):
        assert f"\n    {verb} " in top or f"\n  {verb} " in top, verb
    plan = run_launcher(["plan", "--help"], cwd=tmp_path).stdout
    assert "(default: 5.00)" in plan and "(default: 30)" in plan and "(default: edit)" in plan


# -- 6: resume --------------------------------------------------------------------------------


def test_resume_gives_a_running_loop_new_caps(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    code, out = run(capsys, "-C", str(repo), "resume", "--budget", "9", "--max-iterations", "12")
    assert code == 0 and "new caps apply now" in out
    state = Store(repo).load()
    assert state is not None and (state.budget_usd, state.max_iterations) == (9.0, 12)
    code, out = run(capsys, "-C", str(repo), "resume", "--budget", "0.000001")
    assert code == 1 and "used up" in out
    assert run(capsys, "-C", str(repo), "resume")[1].endswith("already running.\n")


# -- 7: entry points ------------------------------------------------------------------------


def test_messages_name_the_readers_entry_point(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    inside = run_launcher(["--from", "claude", "status"], cwd=repo).stdout
    terminal = run_launcher(["status"], cwd=repo).stdout
    assert "Start one with /autopilot-codex:codex-plan <goal>" in inside
    assert "Start one with autopilot-codex plan <goal>" in terminal
    start(repo, manager, capsys)
    out = run(capsys, "-C", str(repo), "stop")[1]
    assert "Resume with autopilot-codex resume." in out
    assert "/autopilot-codex:" not in out


def test_every_slash_command_says_it_is_read_in_claude() -> None:
    for md in sorted((ROOT / "commands").glob("*.md")):
        assert '/bin/autopilot-codex" --from claude ' in md.read_text(), md.name


# -- 9: status --------------------------------------------------------------------------------


def test_status_shows_sub_cent_costs_and_the_next_step(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    store = Store(repo)
    state = store.load()
    assert state is not None
    store.save(state.evolve(budget_used_usd=0.004, status="paused", stop_reason="stalled"))
    out = run(capsys, "-C", str(repo), "status")[1]
    assert "spent <$0.01 of $5.00" in out
    assert "Next: resume with autopilot-codex resume" in out
    out = run(capsys, "-C", str(repo), "--from", "claude", "status")[1]
    assert "Next: resume with /autopilot-codex:codex-resume" in out
    store.save(state.evolve(budget_used_usd=5.0, status="stopped_budget"))
    assert (
        "resume with autopilot-codex resume --budget 10.00"
        in run(capsys, "-C", str(repo), "status")[1]
    )


# -- 10: one Python environment -------------------------------------------------------------


def fake_venv(venv: Path, log: Path) -> None:
    """A venv whose python records each use, then runs this interpreter."""
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$0" >>"{log}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    # The launcher's stamp: POSIX cksum of the requirements, as the launcher computes it.
    with (ROOT / "bridge" / "requirements.txt").open("rb") as requirements:
        stamp = subprocess.run(["cksum"], stdin=requirements, capture_output=True, text=True)
    (venv / ".autopilot-codex-stamp").write_text(stamp.stdout.split()[0] + "\n")


def test_hooks_and_commands_use_the_venv_that_install_built(tmp_path: Path, isolated: Path) -> None:
    log = tmp_path / "python-uses.log"
    fake_venv(isolated / "venv", log)  # where `install`, run in a terminal, builds it
    plugin_data = tmp_path / "plugin-data"  # what Claude Code sets for the hooks
    repo = make_repo(tmp_path / "repo")
    other = make_repo(tmp_path / "other")
    marker = active_dir() / "other-0123"
    marker.parent.mkdir(parents=True)
    marker.write_text(json.dumps({"worktree": str(other), "session_id": None}))
    env = {"AUTOPILOT_CODEX_PYTHON": "", "CLAUDE_PLUGIN_DATA": str(plugin_data)}
    hook = run_launcher(
        ["hook", "Stop"], stdin=json.dumps(payload("Stop", repo)).encode(), cwd=repo, env=env
    )
    assert hook.code == 0 and "being set up" not in hook.stderr and "skipped" not in hook.stderr
    command = run_launcher(["status"], cwd=repo, env=env)
    assert command.code == 0, command.stderr
    assert "setting up" not in command.stderr
    assert log.read_text().splitlines() == [str(isolated / "venv" / "bin" / "python")] * 2
    assert not (plugin_data / "venv").exists()
    assert LAUNCHER.exists()
