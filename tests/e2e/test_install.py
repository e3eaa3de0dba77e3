"""The README's install path, on the real Claude Code CLI: marketplace add, install, validate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.wall import check_wall_prereqs
from tests.conftest import plan_body
from tests.fakes.openai_server import FakeOpenAI

from .claude_cli import build_env

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def claude_cmd(
    claude_bin: Path, home: Path, tmp_path: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    env = build_env(home=home, tmpdir=tmp_path, anthropic_url="http://127.0.0.1:9")
    return subprocess.run(
        [str(claude_bin), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_plugin_validates_strictly(claude_bin: Path, home: Path, tmp_path: Path) -> None:
    result = claude_cmd(claude_bin, home, tmp_path, "plugin", "validate", str(ROOT), "--strict")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Validation passed" in result.stdout


def test_install_from_the_repository_as_a_marketplace(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    added = claude_cmd(claude_bin, home, tmp_path, "plugin", "marketplace", "add", str(ROOT))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = claude_cmd(
        claude_bin, home, tmp_path, "plugin", "install", "autopilot-codex@autopilot-codex"
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = claude_cmd(claude_bin, home, tmp_path, "plugin", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "autopilot-codex@autopilot-codex" in listed.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"]["autopilot-codex@autopilot-codex"] is True


def test_install_command_without_a_key_says_what_to_set(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    # `bin/autopilot-codex install`, with the pinned CLI first on PATH and no OPENAI_API_KEY.
    env = build_env(home=home, tmpdir=tmp_path, anthropic_url="http://127.0.0.1:9")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "claude").symlink_to(claude_bin)
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    env["AUTOPILOT_CODEX_PYTHON"] = sys.executable
    env["AUTOPILOT_CODEX_HOME"] = str(tmp_path / "state")
    env.pop("OPENAI_API_KEY", None)
    result = subprocess.run(
        [str(ROOT / "bin" / "autopilot-codex"), "install"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "OPENAI_API_KEY is not set" in result.stdout
    assert "export OPENAI_API_KEY=" in result.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"]["autopilot-codex@autopilot-codex"] is True


KEY = "sk-test-e2e-guarded-install-0000"


def readme_terminal(claude_bin: Path, home: Path, tmp_path: Path) -> dict[str, str]:
    """A terminal of a fresh machine: the pinned CLI first on PATH, nothing else set up."""
    env = build_env(home=home, tmpdir=tmp_path, anthropic_url="http://127.0.0.1:9")
    shim = tmp_path / "shim"
    shim.mkdir(exist_ok=True)
    if not (shim / "claude").exists():
        (shim / "claude").symlink_to(claude_bin)
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    env["AUTOPILOT_CODEX_PYTHON"] = sys.executable
    return env


def launch(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "bin" / "autopilot-codex"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def test_a_fresh_home_that_follows_the_readme_gets_a_walled_loop(
    claude_bin: Path, home: Path, tmp_path: Path, git_repo: Path
) -> None:
    """Issue 33: the README's first path, as written: `install` where the plugin was cloned
    with the key exported, the export removed, `plan` in a repository: `status` says walled."""
    prereqs = check_wall_prereqs()
    if not prereqs.ok:
        pytest.skip(f"the wall needs {', '.join(prereqs.missing)} (fix: {prereqs.fix})")
    with FakeOpenAI() as manager:
        env = readme_terminal(claude_bin, home, tmp_path)
        exported = {**env, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": manager.base_url}
        installed = launch(["install"], exported, tmp_path)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        assert "Stored the manager's key from OPENAI_API_KEY in " in installed.stdout
        settings = json.loads((home / ".claude" / "settings.json").read_text())
        assert settings["enabledPlugins"]["autopilot-codex@autopilot-codex"] is True
        assert settings["sandbox"]["enabled"] is True
        # The export removed, as the install said: the stored key (and server) are used.
        manager.enqueue(plan_body(1), schema="Plan")
        planned = launch(["plan", "write", "file1.txt"], env, git_repo)
        assert planned.returncode == 0, planned.stdout + planned.stderr
        assert "Wall: walled (Claude Code's sandbox holds the implementer in)." in planned.stdout
        status = launch(["status"], env, git_repo)
        assert "Wall: walled" in status.stdout, status.stdout + status.stderr
        assert KEY not in planned.stdout + status.stdout + installed.stdout


def test_install_unguarded_leaves_the_claude_settings_as_the_plugin_install_left_them(
    claude_bin: Path, home: Path, tmp_path: Path
) -> None:
    env = readme_terminal(claude_bin, home, tmp_path)
    env["OPENAI_API_KEY"] = KEY
    installed = launch(["install", "--unguarded"], env, tmp_path)
    assert "Unguarded, as asked" in installed.stdout, installed.stdout + installed.stderr
    folder = home / ".claude"
    settings = json.loads((folder / "settings.json").read_text())
    assert "permissions" not in settings and "sandbox" not in settings
    assert not list(folder.glob("settings.json.*.bak"))
    assert not (home / ".autopilot-codex" / "secret").exists()
