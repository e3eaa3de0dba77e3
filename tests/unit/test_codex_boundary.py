"""The Codex CLI's wall: the `-c` overrides it builds, and how effective config is judged."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import hosts
from autopilot_codex.hosts.codex.boundary import (
    PROFILE,
    boundary_overrides,
    effective_status,
    filesystem_table,
    prepare_worktree,
    toml_string,
)

SPEC = dataclasses.replace(
    hosts.roster().wall_spec(Path("/w/repo"), Path("/h/.autopilot-codex"), Path("/h"), {}),
    deny_read=(Path("/h/private"),),
)


def everything(_: Path) -> bool:
    return True


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """The overrides as Codex reads them: each `key=value` is a dotted key and a TOML value."""
    tomllib = pytest.importorskip("tomllib")
    root: dict[str, Any] = {}
    for item in overrides:
        key, _, value = item.partition("=")
        node = root
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = tomllib.loads(f"v = {value}")["v"]
    return root


def test_the_profile_writes_the_worktree_and_git_but_not_what_git_or_hosts_run() -> None:
    table = filesystem_table(SPEC, everything)
    assert table[":root"] == "read"
    assert table["/w/repo"] == "write"
    assert table["/w/repo/.git"] == "write"
    for rel in (".git/config", ".git/hooks", ".git/info", ".claude", ".codex", ".agents"):
        assert table[f"/w/repo/{rel}"] == "read"


def test_the_profile_hides_the_state_home_credentials_and_user_paths() -> None:
    table = filesystem_table(SPEC, everything)
    for path in ("/h/.autopilot-codex", "/h/.codex/auth.json", "/h/.ssh", "/h/private"):
        assert table[path] == "none"


def test_missing_hidden_paths_are_left_out() -> None:
    table = filesystem_table(SPEC, lambda p: p == Path("/h/.ssh"))
    assert table["/h/.ssh"] == "none"
    assert "/h/.aws" not in table
    # Protected folders inside the worktree stay, present or not.
    assert table["/w/repo/.claude"] == "read"


def test_the_overrides_parse_as_toml_into_the_profile() -> None:
    config = parse_overrides(boundary_overrides(SPEC, everything))
    assert config["default_permissions"] == PROFILE
    profile = config["permissions"][PROFILE]
    assert profile["filesystem"] == filesystem_table(SPEC, everything)
    assert profile["network"] == {"enabled": False}
    assert "OPENAI_API_KEY" in config["shell_environment_policy"]["exclude"]


def test_toml_strings_escape_quotes_and_controls() -> None:
    tomllib = pytest.importorskip("tomllib")
    for text in ['a "b" \\c', "tab\there", "del\x7f", "snow ☃ 𝄞"]:
        assert tomllib.loads(f"v = {toml_string(text)}")["v"] == text


def test_the_overrides_are_on() -> None:
    layers = {"overrides": parse_overrides(boundary_overrides(SPEC, everything))}
    status = effective_status(SPEC, layers, everything)
    assert (status.level, status.missing) == ("on", ())


def test_overrides_win_over_a_user_sandbox_mode() -> None:
    layers = {
        "overrides": parse_overrides(boundary_overrides(SPEC, everything)),
        "user": {"sandbox_mode": "danger-full-access"},
    }
    assert effective_status(SPEC, layers, everything).level == "on"


def test_danger_full_access_is_off() -> None:
    status = effective_status(SPEC, {"user": {"sandbox_mode": "danger-full-access"}})
    assert status.level == "off"
    assert effective_status(SPEC, {}).level == "off"
    profile = {"default_permissions": ":danger-full-access"}
    assert effective_status(SPEC, {"overrides": profile}).level == "off"


def test_workspace_write_is_partly_it_cannot_hide_reads() -> None:
    config = {
        "sandbox_mode": "workspace-write",
        "sandbox_workspace_write": {"network_access": True, "writable_roots": ["/tmp/x"]},
        "shell_environment_policy": {"inherit": "none"},
    }
    status = effective_status(SPEC, {"user": config})
    assert status.level == "partly"
    text = "\n".join(status.missing)
    assert "cannot hide the state home" in text
    assert "network_access is true" in text
    assert "/tmp/x" in text


def test_each_missing_piece_of_a_profile_is_named() -> None:
    config = parse_overrides(boundary_overrides(SPEC, everything))
    profile = config["permissions"][PROFILE]
    del profile["filesystem"]["/h/.ssh"]
    profile["filesystem"]["/w/repo/.git/config"] = "write"
    profile["filesystem"]["/opt/tools"] = "write"
    profile["filesystem"][":tmpdir"] = "write"
    profile["network"]["enabled"] = True
    config["shell_environment_policy"] = {"exclude": ["*TOKEN*"], "set": {"CODEX_API_KEY": "x"}}
    status = effective_status(SPEC, {"overrides": config}, everything)
    assert status.level == "partly"
    text = "\n".join(status.missing)
    assert "may read /h/.ssh" in text
    assert "may write /w/repo/.git/config" in text
    assert "/opt/tools" in text and ":tmpdir" in text
    assert "network.enabled is true" in text
    assert "inherits $OPENAI_API_KEY" in text
    assert "set puts $CODEX_API_KEY" in text


def test_env_exclude_patterns_are_globs() -> None:
    config = parse_overrides(boundary_overrides(SPEC, everything))
    config["shell_environment_policy"] = {"exclude": ["*_KEY", "autopilot_codex_*"]}
    assert effective_status(SPEC, {"overrides": config}, everything).level == "on"


def test_prepare_worktree_creates_the_protected_folders(tmp_path: Path) -> None:
    spec = hosts.roster().wall_spec(tmp_path, tmp_path / "s", tmp_path / "h", {})
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    prepare_worktree(spec)
    for rel in (".git/hooks", ".git/info", ".claude", ".codex", ".agents"):
        assert (tmp_path / rel).is_dir()
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
    # A protected file is never made up: an empty `.mcp.json` or `.gitmodules` would be read.
    assert not (tmp_path / ".mcp.json").exists() and not (tmp_path / ".gitmodules").exists()


@pytest.mark.parametrize("git_writable", [True, False])
def test_prepare_worktree_leaves_a_linked_worktrees_git_file(
    tmp_path: Path, git_writable: bool
) -> None:
    """A lane's worktree: `.git` is a file naming its git directory elsewhere."""
    spec = hosts.roster().wall_spec(tmp_path, tmp_path / "s", tmp_path / "h", {})
    spec = dataclasses.replace(spec, git_writable=git_writable)
    (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/lane\n")
    prepare_worktree(spec)
    assert (tmp_path / ".git").read_text() == "gitdir: /elsewhere/.git/worktrees/lane\n"
    for rel in (".claude", ".codex", ".agents"):
        assert (tmp_path / rel).is_dir()


def test_a_missing_protected_file_is_left_to_the_comparison() -> None:
    """Codex leaves a placeholder of a missing path it is told to protect in the worktree: a
    rule for `.mcp.json` that does not exist would create an empty one."""
    table = filesystem_table(SPEC, lambda p: p.name == "config")
    assert "/w/repo/.mcp.json" not in table and "/w/repo/.gitmodules" not in table
    assert table["/w/repo/.git/config"] == "read"
    present = filesystem_table(SPEC, everything)
    assert present["/w/repo/.mcp.json"] == "read" and present["/w/repo/.gitmodules"] == "read"
    config = parse_overrides(boundary_overrides(SPEC, lambda p: p.name == "config"))
    assert effective_status(SPEC, {"overrides": config}, lambda p: p.name == "config").level == "on"


def test_nested_repositories_config_and_hooks_are_read_only(tmp_path: Path) -> None:
    nested = tmp_path / "vendor" / "dep" / ".git"
    spec = dataclasses.replace(SPEC, nested_git=(nested,))
    table = filesystem_table(spec, everything)
    assert table[str(nested / "config")] == "read" and table[str(nested / "hooks")] == "read"


def session_config() -> dict[str, Any]:
    """The boundary as a user's config.toml holds it, for an in-session loop."""
    return parse_overrides(boundary_overrides(SPEC, everything))


def test_a_config_profile_that_picks_danger_full_access_is_off() -> None:
    """`profile = "x"` picks `[profiles.x]`, whose values beat the file's own."""
    config = session_config()
    config["profile"] = "fast"
    config["profiles"] = {"fast": {"default_permissions": ":danger-full-access"}}
    assert effective_status(SPEC, {"user": config}, everything).level == "off"
    config["profiles"] = {"fast": {"sandbox_mode": "danger-full-access"}}
    assert effective_status(SPEC, {"user": config}, everything).level == "off"
    # A profile that does not touch the sandbox leaves the boundary on.
    config["profiles"] = {"fast": {"model": "small"}}
    assert effective_status(SPEC, {"user": config}, everything).level == "on"


def test_a_profiles_shell_policy_counts_too() -> None:
    config = session_config()
    config["profile"] = "mine"
    config["profiles"] = {"mine": {"shell_environment_policy": {"set": {"OPENAI_API_KEY": "x"}}}}
    status = effective_status(SPEC, {"user": config}, everything)
    assert status.level == "partly"
    assert "set puts $OPENAI_API_KEY" in "\n".join(status.missing)


def test_the_rounds_overrides_beat_a_users_profile() -> None:
    user = {"profile": "yolo", "profiles": {"yolo": {"sandbox_mode": "danger-full-access"}}}
    layers = {"overrides": session_config(), "user": user}
    assert effective_status(SPEC, layers, everything).level == "on"


@pytest.mark.parametrize(
    "policy",
    [{"inherit": "core"}, {"include_only": ["PATH", "HOME", "LANG"]}, {"inherit": "none"}],
)
def test_a_shell_policy_that_keeps_only_a_few_names_hides_the_key(policy: dict[str, Any]) -> None:
    config = session_config()
    config["shell_environment_policy"] = policy
    status = effective_status(SPEC, {"user": config}, everything)
    assert (status.level, status.missing) == ("on", ())


def test_include_only_that_lets_the_key_through_is_named() -> None:
    config = session_config()
    config["shell_environment_policy"] = {"include_only": ["*_KEY", "PATH"]}
    status = effective_status(SPEC, {"user": config}, everything)
    text = "\n".join(status.missing)
    assert "inherits $OPENAI_API_KEY" in text and "AUTOPILOT_CODEX_HOME" not in text
