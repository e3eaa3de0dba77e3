"""The boundary a run's rounds get: what it hides, that it judges as walled, and which of the
user's host flags would loosen it."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import hosts
from autopilot_codex.hosts.claude import boundary as claude_boundary
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.hostwall import host_wall
from autopilot_codex.rounds.walled import hidden_env, round_spec, round_wall


def present(tool: str) -> str | None:
    return f"/usr/bin/{tool}"


@pytest.fixture
def no_system_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_boundary, "MANAGED", {"linux": tmp_path / "managed.json"})
    monkeypatch.setattr(codex_boundary, "SYSTEM_CONFIG", tmp_path / "codex-system.toml")


def test_a_round_hides_the_loops_variables_and_its_hosts_own_credentials() -> None:
    env = {
        "PATH": "/bin",
        "AUTOPILOT_CODEX_RUN": "r",
        "AUTOPILOT_CODEX_CLAUDE_CMD": "claude",
        "ANTHROPIC_AUTH_TOKEN": "t",
        "ANTHROPIC_BASE_URL": "http://x",
    }
    hidden = hidden_env(env)
    assert hidden[:4] == ("OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY",
                          "AUTOPILOT_CODEX_HOME")  # fmt: skip
    assert {"AUTOPILOT_CODEX_OWNER", "AUTOPILOT_CODEX_ROUND", "AUTOPILOT_CODEX_RUN"} <= set(hidden)
    assert {"AUTOPILOT_CODEX_CLAUDE_CMD", "ANTHROPIC_AUTH_TOKEN"} <= set(hidden)
    assert "PATH" not in hidden and "ANTHROPIC_BASE_URL" not in hidden


def test_a_rounds_spec_keeps_git_read_only_and_hides_the_hosts_own_logins(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "h"), "CODEX_HOME": str(tmp_path / "ch"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "FAKE_PROVIDER_KEY": "k"}  # fmt: skip
    spec = round_spec("codex", tmp_path / "repo", env)
    assert not spec.git_writable
    assert spec.protected_paths()[0] == tmp_path / "repo" / ".git"
    hidden = spec.hidden_paths()
    assert tmp_path / "ch" / "auth.json" in hidden
    assert tmp_path / "cc" / ".credentials.json" in hidden
    assert tmp_path / "h" / ".codex" / "auth.json" in hidden


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_the_rounds_layer_judges_as_walled(
    host: str, tmp_path: Path, no_system_files: None
) -> None:
    env = {"HOME": str(tmp_path / "h")}
    wall = round_wall(host, tmp_path, env, system="linux", which=present)
    assert wall.boundary is not None
    judged = host_wall(host, tmp_path, flag=wall.layer(), env=env, system="linux", which=present)
    assert (judged.level, judged.missing) == ("on", ())


def test_without_the_tools_claude_rounds_get_no_boundary(tmp_path: Path) -> None:
    wall = round_wall("claude", tmp_path, {"HOME": str(tmp_path)}, system="linux",
                      which=lambda _t: None)  # fmt: skip
    assert wall.boundary is None and wall.layer() is None and wall.args(tmp_path) == []
    # Codex brings its own bubblewrap; only a system without a sandbox stops it.
    codex = round_wall("codex", tmp_path, {"HOME": str(tmp_path)}, system="linux",
                       which=lambda _t: None)  # fmt: skip
    assert codex.boundary is not None
    assert round_wall("codex", tmp_path, {}, system="windows").boundary is None


def test_claude_round_args_name_a_settings_file_in_scratch(tmp_path: Path) -> None:
    wall = round_wall("claude", tmp_path / "repo", {"HOME": str(tmp_path)}, system="linux",
                      which=present)  # fmt: skip
    args = wall.args(tmp_path / "scratch")
    assert args[0] == "--settings"
    assert Path(args[1]).parent == tmp_path / "scratch"
    assert Path(args[1]).read_text().startswith("{")


@pytest.mark.parametrize(
    ("host", "args", "found"),
    [
        ("claude", ["--model", "opus", "--permission-mode", "bypassPermissions"], []),
        ("claude", ["--settings", "{}"], ["--settings"]),
        ("claude", ["--settings={}", "--add-dir", "/"], ["--settings={}", "--add-dir"]),
        ("codex", ["-c", "model=x", "--config=model_reasoning_effort=high", "-m", "x"], []),
        ("codex", ["-s", "danger-full-access"], ["-s"]),
        ("codex", ["--sandbox=read-only"], ["--sandbox=read-only"]),
        ("codex", ["--full-auto", "--yolo"], ["--full-auto", "--yolo"]),
        ("codex", ["-p", "fast"], ["-p"]),
        ("codex", ["-c", "sandbox_mode=danger-full-access"], ["-c sandbox_mode=danger-full-access"]),
        ("codex", ["-cshell_environment_policy.inherit=all"],
         ["-c shell_environment_policy.inherit=all"]),
        ("codex", ["--config", "permissions.autopilot_wall.network.enabled=true"],
         ["-c permissions.autopilot_wall.network.enabled=true"]),
        ("codex", ["-c", "default_permissions=:danger-full-access"],
         ["-c default_permissions=:danger-full-access"]),
    ],
)  # fmt: skip
def test_the_host_flags_that_would_loosen_the_boundary(
    host: str, args: list[str], found: list[str]
) -> None:
    boundary = hosts.get(host).boundary()
    assert boundary is not None
    assert boundary.loosening(args) == found
