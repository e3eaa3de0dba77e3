"""Claude Code's wall: the settings it builds, and how the effective settings are judged."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

from autopilot_codex import hosts
from autopilot_codex.hosts.claude.boundary import boundary_settings, effective_status, is_strict
from autopilot_codex.wall import CREDENTIALS_IN_HOME, check_wall_prereqs

SPEC = dataclasses.replace(
    hosts.roster().wall_spec(Path("/w/repo"), Path("/h/.autopilot-codex"), Path("/h"), {}),
    deny_read=(Path("/h/private"),),
    allow_hosts=("github.com", "localhost"),
)


def settings() -> dict[str, Any]:
    return boundary_settings(SPEC)


def test_the_sandbox_is_on_with_no_way_out() -> None:
    box = settings()["sandbox"]
    assert box["enabled"] is True
    assert box["failIfUnavailable"] is True
    assert box["allowUnsandboxedCommands"] is False
    assert box["excludedCommands"] == []
    assert box["filesystem"]["allowWrite"] == []
    assert box["network"] == {
        "allowedDomains": ["github.com", "localhost"],
        "strictAllowlist": True,
    }


def test_writes_are_denied_on_git_and_host_settings_inside_the_worktree() -> None:
    deny = settings()["sandbox"]["filesystem"]["denyWrite"]
    assert deny == [str(p) for p in SPEC.protected_paths()]
    for rel in (".git/config", ".git/hooks", ".git/info", ".gitmodules", ".mcp.json", ".claude"):
        assert f"/w/repo/{rel}" in deny
    assert {"/w/repo/.codex", "/w/repo/.agents"} <= set(deny)
    rules = settings()["permissions"]["deny"]
    # The file tools are not sandboxed: the same paths are permission rules too, and their
    # rules take globs: a run file at any depth, created later or not.
    assert "Edit(//w/repo/.git/config)" in rules
    assert "Edit(//w/repo/.claude/**)" in rules
    assert "Edit(//w/repo/**/.git/config)" in rules
    assert "Edit(//w/repo/**/.git/hooks/**)" in rules
    assert "Edit(//w/repo/.mcp.json)" in rules
    assert settings()["permissions"]["blockWritesOutsideWorkingDirectories"] is True


def test_reads_are_denied_on_the_state_home_credentials_and_user_paths() -> None:
    deny = settings()["sandbox"]["filesystem"]["denyRead"]
    assert deny[0] == "/h/.autopilot-codex"
    for rel in CREDENTIALS_IN_HOME:
        assert f"/h/{rel}" in deny
    assert "/h/private" in deny
    rules = settings()["permissions"]["deny"]
    assert "Read(//h/.autopilot-codex/**)" in rules
    assert "Read(//h/.ssh/**)" in rules


def test_the_manager_key_is_unset_for_sandboxed_commands() -> None:
    env = settings()["sandbox"]["credentials"]["envVars"]
    assert {"name": "OPENAI_API_KEY", "mode": "deny"} in env
    assert all(e["mode"] == "deny" for e in env)


def test_the_settings_are_plain_json() -> None:
    assert json.loads(json.dumps(settings())) == settings()


def test_the_boundary_passed_with_settings_flag_is_on() -> None:
    status = effective_status(SPEC, {"flag": settings()})
    assert (status.level, status.missing) == ("on", ())
    assert is_strict({"flag": settings()})


def test_the_same_boundary_in_user_settings_is_partly_not_strict_beside_a_repository_layer() -> (
    None
):
    assert effective_status(SPEC, {"user": settings()}).level == "on"
    for layer in ("project", "local"):
        status = effective_status(SPEC, {"user": settings(), layer: {}})
        assert status.level == "partly"
        assert len(status.missing) == 1 and "not strict" in status.missing[0]


def test_no_settings_at_all_is_off() -> None:
    status = effective_status(SPEC, {})
    assert status.level == "off"
    assert any("sandbox.enabled" in m for m in status.missing)


def test_a_project_file_turns_it_off_when_not_strict() -> None:
    layers = {"user": settings(), "project": {"sandbox": {"enabled": False}}}
    assert effective_status(SPEC, layers).level == "off"


def test_a_project_file_cannot_loosen_a_strict_boundary() -> None:
    loosen = {
        "sandbox": {
            "enabled": False,
            "allowUnsandboxedCommands": True,
            "excludedCommands": ["cat *"],
            "enableWeakerNestedSandbox": True,
            "network": {"allowedDomains": ["evil.example"], "strictAllowlist": False},
        }
    }
    layers = {"flag": settings(), "project": loosen, "local": loosen}
    assert effective_status(SPEC, layers).level == "on"


def test_a_user_layer_can_still_loosen_a_strict_boundary() -> None:
    # The CLI keeps listening to user settings under strict rules.
    layers = {"flag": settings(), "user": {"sandbox": {"excludedCommands": ["git push *"]}}}
    status = effective_status(SPEC, layers)
    assert status.level == "partly"
    assert any("excludedCommands" in m for m in status.missing)


def test_each_missing_piece_is_named() -> None:
    doc = copy.deepcopy(settings())
    doc["sandbox"]["filesystem"]["denyRead"].remove("/h/.ssh")
    doc["permissions"]["deny"] = [r for r in doc["permissions"]["deny"] if ".ssh" not in r]
    doc["sandbox"]["filesystem"]["denyWrite"].remove("/w/repo/.git/hooks")
    # The sandbox also takes Edit(...) deny rules as write denies: drop those too.
    doc["permissions"]["deny"] = [r for r in doc["permissions"]["deny"] if "hooks" not in r]
    doc["sandbox"]["credentials"]["envVars"] = []
    doc["sandbox"]["network"]["allowedDomains"].append("pastebin.example")
    doc["sandbox"]["allowUnsandboxedCommands"] = True
    status = effective_status(SPEC, {"flag": doc, "project": {}})
    assert status.level == "partly"
    text = "\n".join(status.missing)
    assert "Bash may read /h/.ssh" in text
    assert "the Read tool may read /h/.ssh" in text
    assert "Bash may write /w/repo/.git/hooks" in text
    assert "$OPENAI_API_KEY" in text
    assert "pastebin.example" in text
    assert "dangerouslyDisableSandbox" in text
    assert "not strict" in text


def test_a_wider_deny_covers_the_paths_below_it() -> None:
    doc = copy.deepcopy(settings())
    doc["sandbox"]["filesystem"]["denyWrite"] = ["/w/repo/.git/**", "/w/repo/.claude"]
    doc["sandbox"]["filesystem"]["denyWrite"] += ["/w/repo/.codex/", "/w/repo/.agents"]
    doc["sandbox"]["filesystem"]["denyWrite"] += ["/w/repo/.mcp.json", "/w/repo/.gitmodules"]
    doc["permissions"]["deny"] = ["Edit(//w/repo/.git/**)", "Edit(//w/repo/.claude)"]
    doc["permissions"]["deny"] += ["Edit(//w/repo/.codex)", "Edit(//w/repo/.agents/**)"]
    doc["permissions"]["deny"] += ["Edit(//w/repo/.mcp.json)", "Edit(//w/repo/.gitmodules)"]
    doc["permissions"]["deny"] += ["Read(~/.autopilot-codex)", "Read(//h/private)"]
    doc["permissions"]["deny"] += [f"Read(~/{rel})" for rel in CREDENTIALS_IN_HOME]
    doc["permissions"]["deny"] += ["Read(~/.codex)", "Read(~/.claude/.credentials.json)"]
    assert effective_status(SPEC, {"flag": doc}).level == "on"


def test_block_writes_outside_counts_from_any_layer() -> None:
    doc = copy.deepcopy(settings())
    del doc["permissions"]["blockWritesOutsideWorkingDirectories"]
    layers = {
        "flag": doc,
        "project": {"permissions": {"blockWritesOutsideWorkingDirectories": True}},
    }
    assert effective_status(SPEC, layers).level == "on"
    assert effective_status(SPEC, {"flag": doc}).level == "partly"


def test_prereqs_name_the_missing_tools_and_the_fix() -> None:
    def which(have: set[str]) -> Any:
        return lambda tool: f"/usr/bin/{tool}" if tool in have else None

    ok = check_wall_prereqs("Linux", which({"bwrap", "socat", "apt-get"}))
    assert ok.ok and ok.missing == ()
    missing = check_wall_prereqs("Linux", which({"apt-get"}))
    assert not missing.ok
    assert missing.missing == ("bwrap", "socat")
    assert missing.fix == "sudo apt-get install -y bubblewrap socat"
    no_apt = check_wall_prereqs("Linux", which({"bwrap"}))
    assert no_apt.missing == ("socat",) and "socat" in no_apt.fix
    assert check_wall_prereqs("Darwin", which(set())).ok
    assert not check_wall_prereqs("Windows", which(set())).ok


def test_an_absent_commondir_is_no_sandbox_path_or_every_git_in_the_wall_fails(
    tmp_path: Path,
) -> None:
    # Claude Code's sandbox puts an unreadable entry where a denied path is missing, and git
    # then fails on every command ("failed to read .git/commondir"): the walled implementer's
    # git was broken. Absent, it is left to the rails and the comparison at each start.
    (tmp_path / ".git").mkdir()
    spec = hosts.roster().wall_spec(tmp_path, tmp_path / "state", tmp_path / "home", {})
    deny = boundary_settings(spec)["sandbox"]["filesystem"]["denyWrite"]
    assert str(tmp_path / ".git" / "commondir") not in deny
    assert str(tmp_path / ".git" / "config") in deny
    assert "Edit(/" + f"{tmp_path.as_posix()}/**/.git/commondir)" in (
        boundary_settings(spec)["permissions"]["deny"]
    )
    # Present (planted, or a layout that has one), it is kept from being rewritten.
    (tmp_path / ".git" / "commondir").write_text("elsewhere\n")
    deny = boundary_settings(spec)["sandbox"]["filesystem"]["denyWrite"]
    assert str(tmp_path / ".git" / "commondir") in deny
