"""Every standard credential store is hidden by default, and each host's own login wherever its
variables put it, in the in-session wall (`install --wall`, `plan`'s judge) as in rounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import hosts
from autopilot_codex.hosts.claude import boundary as claude_boundary
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.hostwall import spec_for

HOME = Path("/h")
STANDARD = (
    ".git-credentials", ".netrc", ".ssh", ".aws", ".azure", ".config/gcloud", ".kube",
    ".docker/config.json", ".npmrc", ".pypirc", ".config/gh",
)  # fmt: skip


def test_every_standard_store_and_both_logins_by_default() -> None:
    stores = hosts.roster().credential_stores(HOME, {})
    for rel in (*STANDARD, ".codex/auth.json", ".claude/.credentials.json"):
        assert HOME / rel in stores, rel


def test_the_logins_follow_the_hosts_variables_and_keep_the_defaults() -> None:
    env = {"CODEX_HOME": "/elsewhere/codex", "CLAUDE_CONFIG_DIR": "~/cc"}
    logins = hosts.roster().logins(HOME, env)
    assert Path("/elsewhere/codex/auth.json") in logins
    assert Path("~/cc").expanduser() / ".credentials.json" in logins
    assert HOME / ".codex" / "auth.json" in logins
    assert HOME / ".claude" / ".credentials.json" in logins


def test_a_blank_variable_is_the_default_place() -> None:
    assert hosts.roster().logins(HOME, {"CODEX_HOME": "  "}) == hosts.roster().logins(HOME, {})


def test_the_in_session_wall_hides_a_login_wherever_its_variable_puts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack: with CODEX_HOME set, `install --wall` and `plan`'s judge built a wall that left
    `$CODEX_HOME/auth.json` readable (only the rounds wall followed the variable)."""
    codex_home, claude_dir = tmp_path / "codex-home", tmp_path / "claude-dir"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude_dir))
    spec = spec_for(tmp_path / "repo", tmp_path / "home")
    hidden = spec.hidden_paths()
    assert codex_home / "auth.json" in hidden
    assert claude_dir / ".credentials.json" in hidden
    settings = claude_boundary.boundary_settings(spec)
    assert str(codex_home / "auth.json") in settings["sandbox"]["filesystem"]["denyRead"]
    table = codex_boundary.filesystem_table(spec, lambda p: True)
    assert table[str(claude_dir / ".credentials.json")] == "none"


def test_an_explicit_environment_wins_over_the_process(tmp_path: Path) -> None:
    spec = spec_for(tmp_path / "repo", tmp_path / "home", {"CODEX_HOME": str(tmp_path / "c")})
    assert tmp_path / "c" / "auth.json" in spec.hidden_paths()


def test_the_spec_names_the_repositories_nested_in_the_worktree(tmp_path: Path) -> None:
    nested = tmp_path / "repo" / "vendor" / "dep" / ".git"
    nested.mkdir(parents=True)
    spec = spec_for(tmp_path / "repo", tmp_path / "home", {})
    assert spec.nested_git == (nested,)
    assert nested / "config" in spec.protected_paths()
    assert nested / "hooks" in spec.protected_folders()


def test_both_hosts_hide_the_same_list_and_protect_the_same_files(tmp_path: Path) -> None:
    """Codex's wall matches Claude's: the same hidden paths, the same protected ones (those
    Codex can hold: a file that does not exist yet is left to the comparison)."""
    spec = spec_for(tmp_path / "repo", tmp_path / "home", {"CODEX_HOME": str(tmp_path / "c")})
    claude = claude_boundary.boundary_settings(spec)["sandbox"]["filesystem"]
    table = codex_boundary.filesystem_table(spec, lambda p: True)
    assert set(claude["denyRead"]) == {k for k, v in table.items() if v == "none"}
    protected = {k for k, v in table.items() if v == "read" and k != ":root"}
    assert set(claude["denyWrite"]) == protected
