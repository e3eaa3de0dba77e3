"""Guarded is the default, unguarded is said out loud: the real `plan`, `status`, `doctor`,
`ralph` and `run` commands and the Stop and PreToolUse hooks, with settings files written in a
temporary HOME (walled, partly, off) and stand-ins for bubblewrap and socat on PATH."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.commands.doctor import render, run_checks
from autopilot_codex.commands.run import main as run_main
from autopilot_codex.hosts.claude import boundary as claude_boundary
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.hostwall import spec_for
from autopilot_codex.paths import project_dir
from tests.conftest import payload, plan_body, run_hook_inproc, state_of, verdict_body
from tests.fakes.openai_server import FakeOpenAI

SEATBELT = "UNGUARDED: the rails are a seatbelt, not a wall"


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bwrap and socat stand-ins on PATH (only looked up), managed settings in tmp_path.
    Returns the user's home."""
    shim = tmp_path / "shim"
    shim.mkdir()
    for tool in ("bwrap", "socat"):
        (shim / tool).write_text("#!/bin/sh\nexit 0\n")
        (shim / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(claude_boundary, "MANAGED", {"linux": tmp_path / "managed.json"})
    monkeypatch.setattr(codex_boundary, "SYSTEM_CONFIG", tmp_path / "codex-system.toml")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    home = Path(os.environ["HOME"])
    home.mkdir(parents=True, exist_ok=True)
    return home


def boundary(repo: Path, home: Path) -> dict[str, Any]:
    return claude_boundary.boundary_settings(spec_for(repo, home))


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def plan(
    capsys: pytest.CaptureFixture[str], repo: Path, manager: FakeOpenAI, *extra: str
) -> tuple[int, str]:
    manager.enqueue(plan_body(2), schema="Plan")
    return cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", *extra, "do", "it")


def deny_reason(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    data = payload(
        "PreToolUse", repo, tool_name="Bash", tool_input={"command": "git reset --hard HEAD~1"}
    )
    out = run_hook_inproc("PreToolUse", data, capsys, monkeypatch).json
    return str(out["hookSpecificOutput"]["permissionDecisionReason"])


def stop_banner(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch).json
    assert out.get("decision") == "block", out
    return str(out["systemMessage"])


def test_an_unguarded_loop_says_so_at_plan_status_stop_and_every_denial(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, out = plan(capsys, repo, manager)
    assert code == 0, out
    assert "UNGUARDED (no sandbox, Claude Code)" in out
    assert "sandbox.enabled is not true" in out
    assert "Fix: `autopilot-codex install --wall`" in out
    state = state_of(repo)
    assert state["wall"] == "off" and state["wall_missing"]
    code, status = cli(capsys, "-C", str(repo), "status")
    assert "Wall: UNGUARDED (off;" in status
    reason = deny_reason(repo, capsys, monkeypatch)
    assert reason.startswith("autopilot-codex safety rail [reset-hard]")
    assert reason.endswith(SEATBELT)
    assert stop_banner(repo, manager, capsys, monkeypatch).endswith(SEATBELT)


def test_the_boundary_in_user_settings_walls_a_repository_without_settings_of_its_own(
    repo: Path, manager: FakeOpenAI, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not strict matters only where the repository has a settings file that could loosen the
    boundary (now, or after a pull); nothing inside the wall can create one."""
    write(machine / ".claude" / "settings.json", boundary(repo, machine))
    code, out = plan(capsys, repo, manager)
    assert code == 0
    assert "Wall: walled (Claude Code's sandbox holds the implementer in)." in out
    assert state_of(repo)["wall"] == "on"
    assert cli(capsys, "-C", str(repo), "stop")[0] == 0
    write(repo / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(ls:*)"]}})
    code, out = plan(capsys, repo, manager)
    assert code == 0
    assert "UNGUARDED (partly walled, Claude Code)" in out
    assert "not strict" in out and "managed.json" in out
    assert state_of(repo)["wall"] == "partly"


def test_a_walled_loop_says_walled_and_its_rails_are_plain(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(machine.parent / "managed.json", boundary(repo, machine))
    code, out = plan(capsys, repo, manager, "--require-wall")
    assert code == 0, out
    assert "Wall: walled (Claude Code's sandbox holds the implementer in)." in out
    assert "UNGUARDED" not in out
    assert state_of(repo)["wall"] == "on" and state_of(repo)["wall_missing"] == []
    assert "Wall: walled" in cli(capsys, "-C", str(repo), "status")[1]
    assert "seatbelt" not in deny_reason(repo, capsys, monkeypatch)
    assert "UNGUARDED" not in stop_banner(repo, manager, capsys, monkeypatch)


def test_require_wall_refuses_an_unguarded_loop_before_any_call(
    repo: Path, manager: FakeOpenAI, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(repo / ".claude" / "settings.json", {"sandbox": {"enabled": False}})
    code, out = cli(capsys, "-C", str(repo), "plan", "--require-wall", "do", "it")
    assert code == 1
    assert "--require-wall: this loop would run unguarded, so it was not started" in out
    assert "sandbox.enabled is not true" in out
    assert manager.requests == []
    assert not (project_dir(repo) / "state.json").exists()


def test_ralph_records_the_wall_and_refuses_unguarded_with_require_wall(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "-C", str(repo), "ralph", "--require-wall", "fix", "it")
    assert code == 1 and "--require-wall" in out
    assert not (project_dir(repo) / "state.json").exists()
    code, out = cli(capsys, "-C", str(repo), "ralph", "fix", "it")
    assert code == 0 and "UNGUARDED (no sandbox, Claude Code)" in out
    assert out.rstrip().endswith("fix it")
    assert state_of(repo)["wall"] == "off"
    assert "Wall: UNGUARDED (off;" in cli(capsys, "-C", str(repo), "status")[1]


def test_run_without_bubblewrap_refuses_unguarded_with_require_wall(
    repo: Path,
    machine: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bare = tmp_path / "bare-path"
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(bare))
    code = run_main(["--implementer", "claude", "--require-wall", "--cwd", str(repo), "goal"])
    err = capsys.readouterr().err
    assert code == 1
    assert "--require-wall" in err and "UNGUARDED (no sandbox, Claude Code)" in err
    assert "bwrap is not installed" in err


def test_run_judges_the_rounds_boundary_with_the_users_codex_config(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rounds' `-c` overrides are judged as a layer over the user's config: they wall a
    round in, except where the user's config still hands the key to the shell."""
    config = machine.parent / "codex-home" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        'sandbox_mode = "danger-full-access"\n[shell_environment_policy.set]\n'
        'OPENAI_API_KEY = "sk-put-back"\n'
    )
    code = run_main(["--implementer", "codex", "--require-wall", "--cwd", str(repo), "goal"])
    err = capsys.readouterr().err
    assert code == 1
    assert "UNGUARDED (partly walled, Codex)" in err
    assert "shell_environment_policy.set puts $OPENAI_API_KEY in the shell" in err
    # The danger-full-access of the user's file is not among the missing pieces: the
    # rounds' own profile wins over it.
    assert "danger-full-access" not in err


def test_doctor_names_an_unguarded_wall_in_two_lines_a_host_with_the_command_that_fixes_it(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 36: an unguarded wall printed some 50 lines on `install` and `doctor`."""
    code, text = cli(capsys, "-C", str(repo), "doctor")
    walls = [
        line
        for line in text.splitlines()
        if line.startswith("--   wall") or line.startswith("       ")
    ]
    assert len(walls) <= 5, text
    claude = next(line for line in walls if line.startswith("--   wall (Claude Code)"))
    assert "; missing: " in claude and "more: `autopilot-codex doctor --verbose`" in claude
    assert any(line.startswith("       fix: `autopilot-codex install --wall`") for line in walls)
    _, every = cli(capsys, "-C", str(repo), "doctor", "--verbose")
    assert "without it: details: docs/security.md" in every


def test_doctor_reports_the_wall_per_host_with_each_piece_and_fix(
    repo: Path, machine: Path
) -> None:
    text = render(run_checks(str(repo), verbose=True))
    claude = next(line for line in text.splitlines() if line.startswith("--   wall (Claude Code)"))
    assert "off, UNGUARDED" in claude
    assert "fix: `autopilot-codex install --wall`" in text
    assert "wall (Codex): off" in text
    assert "doctor --wall` prints the lines" in text
    # What the bridge alone cannot make true is said where a loop would run unguarded.
    assert "without it: the implementer can read the manager's key" in text
    assert "without it: details: docs/security.md" in text
    # Facts said loudly, not faults: an unguarded machine can still run a loop.
    assert not any(line.startswith("FIX  wall") for line in text.splitlines())


def test_doctor_wall_writes_claude_settings_and_codex_lines_make_codex_walled(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = machine / ".claude" / "settings.json"
    write(settings, {"model": "mine"})
    code, out = cli(capsys, "-C", str(repo), "doctor", "--wall")
    assert f"Backed up {settings} to" in out
    assert f"Wrote the wall for {repo} into {settings}:" in out
    data = json.loads(settings.read_text())
    assert data["model"] == "mine" and data["sandbox"]["allowUnsandboxedCommands"] is False
    assert "wall (Claude Code): on" in out
    lines = out.split("they were not written:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    config = machine.parent / "codex-home" / "config.toml"
    # Printed, never written: the user's Codex config is theirs to change.
    assert not config.exists()
    config.parent.mkdir(parents=True)
    config.write_text("\n".join(lines) + "\n")
    text = render(run_checks(str(repo)))
    assert "ok   wall (Codex): on" in text


@pytest.mark.parametrize("content", ["[]", "{ not json"], ids=["not-an-object", "not-json"])
def test_doctor_wall_never_writes_over_settings_it_cannot_read(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    settings = machine / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(content)
    code, out = cli(capsys, "-C", str(repo), "doctor", "--wall")
    assert code == 1 and f"{settings}" in out and "nothing was written" in out
    assert settings.read_text() == content
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]


def test_doctor_wall_writes_fresh_settings_without_a_backup(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = machine / ".claude" / "settings.json"
    code, out = cli(capsys, "-C", str(repo), "doctor", "--wall")
    assert "Backed up" not in out and f"Wrote the wall for {repo} into {settings}:" in out
    assert json.loads(settings.read_text()) == boundary(repo, machine)
    assert settings.stat().st_mode & 0o777 == 0o600


def test_a_file_tool_denial_of_an_unguarded_loop_names_the_seatbelt(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert plan(capsys, repo, manager)[0] == 0
    target = project_dir(repo) / "state.json"
    data = payload(
        "PreToolUse",
        repo,
        tool_name="Write",
        tool_input={"file_path": str(target), "content": "{}"},
    )
    out = run_hook_inproc("PreToolUse", data, capsys, monkeypatch).json
    reason = out["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("autopilot-codex safety rail [") and reason.endswith(SEATBELT)


def test_a_loop_from_before_the_wall_was_judged_keeps_its_plain_messages(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.conftest import edit_state

    assert plan(capsys, repo, manager)[0] == 0
    edit_state(repo, wall="", wall_missing=[])
    assert "seatbelt" not in deny_reason(repo, capsys, monkeypatch)
    assert "Wall:" not in cli(capsys, "-C", str(repo), "status")[1]


def test_resume_judges_the_wall_afresh(
    repo: Path, manager: FakeOpenAI, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert plan(capsys, repo, manager)[0] == 0
    assert cli(capsys, "-C", str(repo), "stop")[0] == 0
    write(machine.parent / "managed.json", boundary(repo, machine))
    code, out = cli(capsys, "-C", str(repo), "resume")
    assert code == 0 and "loop resumed" in out
    assert out.rstrip().endswith("Wall: walled (Claude Code's sandbox holds the implementer in).")
    assert state_of(repo)["wall"] == "on"


def test_plan_in_a_codex_session_judges_the_effective_codex_config(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An in-session Codex loop: the lines `install --wall` prints make it walled; a config
    profile that picks danger-full-access (its values beat the file's) makes it unguarded."""
    from autopilot_codex.commands.wall_install import user_wall

    monkeypatch.setenv("CODEX_THREAD_ID", "thread-1")
    printed = user_wall("codex", repo)
    lines = "\n".join(printed[1 : printed.index("")]) + "\n"
    config = machine.parent / "codex-home" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(lines)
    code, out = plan(capsys, repo, manager)
    assert code == 0, out
    assert "Wall: walled (Codex's sandbox holds the implementer in)." in out
    assert cli(capsys, "-C", str(repo), "stop")[0] == 0
    config.write_text(
        lines + 'profile = "fast"\n[profiles.fast]\nsandbox_mode = "danger-full-access"\n'
    )
    code, out = plan(capsys, repo, manager)
    assert code == 0, out
    assert "UNGUARDED (no sandbox, Codex)" in out
    assert "danger-full-access" in out
    assert state_of(repo)["host"] == "codex" and state_of(repo)["wall"] == "off"


def test_install_claude_wall_writes_the_wall_before_doctor_reports(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = machine / ".claude" / "settings.json"
    code, out = cli(capsys, "-C", str(repo), "install", "claude", "--wall")
    assert out.startswith("autopilot-codex: added to Claude Code.\n")
    assert f"Wrote the wall for {repo} into {settings}:" in out
    assert json.loads(settings.read_text()) == boundary(repo, machine)
    # Doctor reports last, and its verdict is the exit code.
    assert out.rstrip().splitlines()[-1].startswith(("Ready.", "Not ready"))
    assert code == (0 if "Ready." in out else 1)


def test_install_codex_project_takes_the_global_directory(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli(capsys, "-C", str(repo), "install", "codex", "--project")
    assert code == 0, out
    assert (repo / ".codex" / "hooks.json").exists()
