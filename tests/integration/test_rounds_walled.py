"""Every round of a run gets its host's boundary, whatever `--host-arg` says, and `run` judges
that same boundary: the driver against a fake host (its argv is what the real CLI would get),
with stand-ins for bubblewrap and socat on PATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autopilot_codex.commands.run import main
from autopilot_codex.hosts.claude import boundary as claude_boundary
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.paths import project_dir
from autopilot_codex.rounds.driver import custody_for
from tests.conftest import state_of, without_sandbox_tools
from tests.integration.test_rounds_driver import EXIT, READY, Script, calls, drive


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap and socat stand-ins (only looked up); no managed settings or system config."""
    shim = tmp_path / "shim"
    shim.mkdir()
    for tool in ("bwrap", "socat"):
        (shim / tool).write_text("#!/bin/sh\nexit 0\n")
        (shim / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(claude_boundary, "MANAGED", {"linux": tmp_path / "managed.json"})
    monkeypatch.setattr(codex_boundary, "SYSTEM_CONFIG", tmp_path / "codex-system.toml")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-manager-key-not-for-rounds")


def value(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag]


def test_every_claude_round_gets_the_strict_boundary_from_a_file_in_the_state_home(
    repo: Path, script: Script, tools: None, capsys: pytest.CaptureFixture[str]
) -> None:
    path = script([READY, EXIT])
    code, record = drive(repo, "--host-arg=--model", "--host-arg=opus")
    assert (code, record["status"]) == (0, "complete")
    err = capsys.readouterr().err
    assert "UNGUARDED" not in err
    # Issue 36: run never said whether its rounds were walled; its first line does.
    assert err.splitlines()[0] == "Rounds: walled (Claude Code's sandbox holds each round in)."
    rounds = calls(path)
    assert len(rounds) == 2
    for call in rounds:
        argv = call["argv"]
        # The user's flag is kept, and the boundary is added to it.
        assert value(argv, "--model") == ["opus"]
        (settings,) = value(argv, "--settings")
        assert Path(settings).parent == custody_for(repo).path.parent
        assert not Path(settings).is_relative_to(repo)
    boundary = json.loads(Path(settings).read_text())
    sandbox = boundary["sandbox"]
    assert sandbox["enabled"] and sandbox["failIfUnavailable"]
    assert sandbox["allowUnsandboxedCommands"] is False and sandbox["excludedCommands"] == []
    denied = {v["name"] for v in sandbox["credentials"]["envVars"] if v["mode"] == "deny"}
    assert {"OPENAI_API_KEY", "AUTOPILOT_CODEX_HOME", "AUTOPILOT_CODEX_RUN"} <= denied
    assert {"AUTOPILOT_CODEX_OWNER", "AUTOPILOT_CODEX_ROUND"} <= denied
    # A round's git directory is read-only: the driver commits for it.
    assert str(repo / ".git") in sandbox["filesystem"]["denyWrite"]
    assert str(project_dir(repo).parent.parent) in sandbox["filesystem"]["denyRead"]
    # The run reads as walled, and its loop says so.
    assert state_of(repo)["wall"] == "on" and state_of(repo)["wall_missing"] == []


def test_every_codex_round_gets_the_profile_instead_of_its_default_sandbox_flag(
    repo: Path, script: Script, tools: None
) -> None:
    path = script([READY, EXIT])
    code, _ = drive(repo, host="codex")
    assert code == 0
    for call in calls(path):
        argv = call["argv"]
        assert "--sandbox" not in argv
        overrides = value(argv, "-c")
        assert 'default_permissions="autopilot_wall"' in overrides
        assert "permissions.autopilot_wall.network.enabled=false" in overrides
        (fs,) = [o for o in overrides if o.startswith("permissions.autopilot_wall.filesystem=")]
        assert f'"{repo / ".git"}" = "read"' in fs
        (env,) = [o for o in overrides if o.startswith("shell_environment_policy.exclude=")]
        assert '"OPENAI_API_KEY"' in env and '"AUTOPILOT_CODEX_RUN"' in env
    # The folders the profile mounts read-only exist, so no placeholder is left behind.
    assert (repo / ".codex").is_dir() and (repo / ".agents").is_dir()
    assert state_of(repo)["wall"] == "on"


@pytest.mark.parametrize(
    ("host", "args", "named"),
    [
        ("claude", ["--host-arg=--settings", '--host-arg={"sandbox":{"enabled":false}}'],
         "--settings"),
        ("claude", ["--host-arg=--add-dir=/"], "--add-dir=/"),
        ("codex", ["--host-arg=--dangerously-bypass-approvals-and-sandbox"], "--dangerously"),
        ("codex", ["--host-arg=-s", "--host-arg=danger-full-access"], "-s"),
        ("codex", ["--host-arg=-c", "--host-arg=shell_environment_policy.inherit=all"],
         "-c shell_environment_policy.inherit=all"),
        ("codex", ["--host-arg=--config=permissions.autopilot_wall.network.enabled=true"],
         "permissions.autopilot_wall.network"),
    ],
)  # fmt: skip
def test_a_host_arg_that_would_drop_the_wall_is_refused_before_any_round(
    repo: Path,
    script: Script,
    tools: None,
    capsys: pytest.CaptureFixture[str],
    host: str,
    args: list[str],
    named: str,
) -> None:
    path = script([READY, EXIT])
    code, _ = drive(repo, *args, host=host)
    err = capsys.readouterr().err
    assert code == 1
    assert "would replace or loosen the wall" in err and named in err
    assert not Path(f"{path}.calls.jsonl").exists()
    assert not custody_for(repo).path.exists()


def test_without_the_sandbox_tools_a_claude_run_says_unguarded_and_runs_unwalled(
    repo: Path, script: Script, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    without_sandbox_tools(tmp_path, monkeypatch)
    path = script([READY, EXIT])
    code, _ = drive(repo)
    assert code == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("Rounds: UNGUARDED (no sandbox, Claude Code): the rails are a ")
    assert first.endswith(" more (`autopilot-codex doctor --verbose`)")
    # `failIfUnavailable` would stop the CLI: no boundary is passed where it cannot start.
    assert all("--settings" not in c["argv"] for c in calls(path))
    assert state_of(repo)["wall"] == "off"
    assert main(["g", "--implementer", "claude", "--require-wall", "--cwd", str(repo)]) == 1
