"""The README's install path, on the real Claude Code CLI: marketplace add, install, validate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
