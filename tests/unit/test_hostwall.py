"""The wall's status plumbing: settings layers read from real files, the machine's prereqs, the
level a loop records, and the notes its messages carry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex.commands.wall_install import user_wall
from autopilot_codex.hosts.claude import boundary as claude_boundary
from autopilot_codex.hosts.claude import userwall
from autopilot_codex.hosts.codex import boundary as codex_boundary
from autopilot_codex.hostwall import HostWall, headline, host_wall, spec_for, status_line
from autopilot_codex.seatbelt import seatbelt_note, unguarded, with_seatbelt


def present(tool: str) -> str | None:
    return f"/usr/bin/{tool}"


def absent(tool: str) -> str | None:
    return None


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setattr(claude_boundary, "MANAGED", {"linux": tmp_path / "managed.json"})
    monkeypatch.setattr(codex_boundary, "SYSTEM_CONFIG", tmp_path / "codex-system.toml")
    return home


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def claude(worktree: Path, which: Callable[[str], str | None] = present) -> HostWall:
    return host_wall("claude", worktree, system="linux", which=which)


def test_no_settings_is_off_with_the_fix(home: Path, tmp_path: Path) -> None:
    wall = claude(tmp_path)
    assert wall.level == "off"
    assert any("sandbox.enabled is not true" in m for m in wall.missing)
    assert any("install --wall" in f for f in wall.fixes)


def test_the_boundary_in_user_settings_is_only_partly_beside_a_repositorys_own(
    home: Path, tmp_path: Path
) -> None:
    boundary = claude_boundary.boundary_settings(spec_for(tmp_path, home))
    write(home / ".claude" / "settings.json", boundary)
    assert claude(tmp_path) == HostWall("claude", "on")
    write(tmp_path / ".claude" / "settings.local.json", {})
    wall = claude(tmp_path)
    assert wall.level == "partly"
    assert [m for m in wall.missing if not m.startswith("not strict")] == []
    assert any("managed.json" in f for f in wall.fixes)


def test_the_boundary_in_managed_settings_is_on(home: Path, tmp_path: Path) -> None:
    write(tmp_path / "managed.json", claude_boundary.boundary_settings(spec_for(tmp_path, home)))
    assert claude(tmp_path) == HostWall("claude", "on")


def test_a_project_file_that_switches_the_sandbox_off_counts(home: Path, tmp_path: Path) -> None:
    write(
        home / ".claude" / "settings.json",
        claude_boundary.boundary_settings(spec_for(tmp_path, home)),
    )
    write(tmp_path / ".claude" / "settings.json", {"sandbox": {"enabled": False}})
    assert claude(tmp_path).level == "off"


def test_missing_bubblewrap_turns_claude_off_and_names_the_package(
    home: Path, tmp_path: Path
) -> None:
    write(tmp_path / "managed.json", claude_boundary.boundary_settings(spec_for(tmp_path, home)))
    wall = claude(tmp_path, which=lambda t: "/usr/bin/apt-get" if t == "apt-get" else None)
    assert wall.level == "off"
    assert wall.missing[:2] == (
        "bwrap is not installed: the sandbox cannot start",
        "socat is not installed: the sandbox cannot start",
    )
    assert wall.fixes == ("sudo apt-get install -y bubblewrap socat",)


def test_codex_is_judged_from_its_config_files(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex_home = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    env = {"HOME": str(home), "CODEX_HOME": str(codex_home)}
    assert host_wall("codex", tmp_path, env=env, system="linux").level == "off"
    codex_home.mkdir()
    printed = user_wall("codex", tmp_path, env)
    assert codex_boundary.BOUNDARY.unwall() == []  # it printed, so nothing to take back
    lines = printed[1 : printed.index("")]
    assert "They name this worktree" in printed[-1]
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
    wall = host_wall("codex", tmp_path, env=env, system="linux", which=absent)
    # Codex brings its own bubblewrap: a machine without one does not stop it.
    assert wall == HostWall("codex", "on"), wall.missing
    (codex_home / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    assert host_wall("codex", tmp_path, env=env, system="linux").level == "off"
    assert host_wall("codex", tmp_path, env=env, system="windows").level == "off"


def test_merged_keeps_the_users_entries_and_adds_the_boundary() -> None:
    mine = {"model": "x", "permissions": {"deny": ["Bash(rm *)"], "allow": ["Read"]}}
    out = userwall.merged(
        mine, {"permissions": {"deny": ["Edit(//a)", "Bash(rm *)"]}, "sandbox": {"enabled": True}}
    )
    assert out == {
        "model": "x",
        "permissions": {"deny": ["Bash(rm *)", "Edit(//a)"], "allow": ["Read"]},
        "sandbox": {"enabled": True},
    }


def test_write_claude_backs_up_first_and_shows_what_it_wrote(home: Path, tmp_path: Path) -> None:
    target = home / ".claude" / "settings.json"
    write(target, {"model": "mine"})
    target.chmod(0o640)
    lines = userwall.write(
        claude_boundary.boundary_settings(spec_for(tmp_path, home)), target, tmp_path
    )
    backups = list(target.parent.glob("settings.json.*.bak"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == {"model": "mine"}
    assert lines[0] == f"Backed up {target} to {backups[0]}."
    data = json.loads(target.read_text())
    assert data["model"] == "mine" and data["sandbox"]["enabled"] is True
    assert json.loads(lines[2]) == claude_boundary.boundary_settings(spec_for(tmp_path, home))
    assert target.stat().st_mode & 0o777 == 0o640


def test_write_claude_refuses_a_file_it_cannot_read(home: Path, tmp_path: Path) -> None:
    from autopilot_codex.errors import BridgeError

    target = home / ".claude" / "settings.json"
    target.parent.mkdir(parents=True)
    target.write_text("{not json")
    with pytest.raises(BridgeError, match="nothing was written"):
        userwall.write(
            claude_boundary.boundary_settings(spec_for(tmp_path, home)), target, tmp_path
        )
    assert target.read_text() == "{not json"


def test_notes_name_the_seatbelt_only_when_unguarded() -> None:
    assert [unguarded(w) for w in ("on", "partly", "off", "")] == [False, True, True, False]
    assert seatbelt_note("on") == "" and seatbelt_note("") == ""
    assert with_seatbelt("banner", "off") == (
        "banner · UNGUARDED: the rails are a seatbelt, not a wall"
    )
    assert with_seatbelt("banner", "on") == "banner"
    assert with_seatbelt("", "off") == ""
    assert status_line("", []) == ""
    assert status_line("on", []) == "Wall: walled"
    assert "UNGUARDED (partly; 1 missing piece(s); first: x)" in status_line("partly", ["x"])


def test_headline_lists_the_pieces_and_the_fixes() -> None:
    wall = HostWall("claude", "off", tuple(f"piece {n}" for n in range(10)), ("do this",))
    text = headline(wall, limit=3)
    assert text.startswith("UNGUARDED (no sandbox, Claude Code)")
    assert "  - piece 2" in text and "piece 3" not in text
    assert "... and 7 more" in text and text.endswith("Fix: do this")
    assert headline(HostWall("codex", "on")).startswith("Wall: walled (Codex")


def test_the_users_allowlist_and_hidden_paths_reach_the_wall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`wall_allow_hosts` and `wall_deny_read` in the config are the user's additions."""
    import json as _json

    from autopilot_codex.hosts.claude.boundary import boundary_settings
    from autopilot_codex.hostwall import spec_for
    from autopilot_codex.paths import state_home

    state_home().mkdir(parents=True, exist_ok=True)
    (state_home() / "config.json").write_text(
        _json.dumps(
            {"wall_allow_hosts": ["github.com"], "wall_deny_read": ["~/.vault", "/srv/keys", "rel"]}
        )
    )
    user = tmp_path / "me"
    spec = spec_for(tmp_path / "work", user)
    assert spec.allow_hosts == ("github.com",)
    assert spec.deny_read == (user / ".vault", Path("/srv/keys"))
    network = boundary_settings(spec)["sandbox"]["network"]
    assert network["allowedDomains"] == ["github.com"]
