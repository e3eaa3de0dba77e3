"""`uninstall claude` takes back what `install` did (issue 36's walkthrough): the wall's own
entries in the user's Claude Code settings, never the user's; the link on PATH when it is
ours; then the plugin through Claude Code's own command, or that command named. And the verb's
wrong words, and the wall `install` reports outside a repository. All through the launcher, in
a fresh home."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GIT_ENV, LAUNCHER, HookRun, make_repo, run_launcher
from tests.integration.test_walkthrough import CLAUDE

# The user's own settings before any install: entries in the lists the wall adds to, a hook,
# a value the wall overrides (sandbox.enabled) and one it leaves alone.
MINE: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(./.env)", "Read(~/.ssh/**)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}]
    },
    "sandbox": {"enabled": False},
}


class Machine:
    """A fresh home, `claude` (a stand-in that records the plugin) on PATH, ~/.local/bin too."""

    def __init__(self, tmp: Path, *, claude: str | None = CLAUDE) -> None:
        self.home, self.work, shims = tmp / "home", tmp / "work", tmp / "shims"
        self.bin = self.home / ".local" / "bin"
        for folder in (self.bin, self.work, shims):
            folder.mkdir(parents=True)
        if claude is not None:
            (shims / "claude").write_text(claude)
            (shims / "claude").chmod(0o755)
        tools = os.pathsep.join(
            str(Path(found).parent) for t in ("git", "bwrap", "socat") if (found := shutil.which(t))
        )
        self.env = {
            **GIT_ENV,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "CODEX_HOME": str(self.home / ".codex"),
            "AUTOPILOT_CODEX_HOME": str(self.home / ".autopilot-codex"),
            "AUTOPILOT_CODEX_HELPER": "0",
            "PATH": os.pathsep.join(
                [str(shims), str(self.bin), tools, str(Path(sys.executable).parent)]
            ),
        }
        self.settings = self.home / ".claude" / "settings.json"

    def run(self, *args: str, cwd: Path | None = None) -> HookRun:
        return run_launcher(list(args), cwd=cwd or self.work, env=self.env)

    def mine(self) -> dict[str, Any]:
        """The user's settings, with one deny entry the wall writes too (theirs: it stays)."""
        mine: dict[str, Any] = json.loads(json.dumps(MINE))
        mine["permissions"]["deny"].append(f"Read(/{self.home}/.ssh)")
        self.settings.parent.mkdir(parents=True)
        self.settings.write_text(json.dumps(mine, indent=4))
        self.settings.chmod(0o640)
        return mine


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, no manager, no state home of the test run's own leaks into the launcher."""
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "AUTOPILOT_CODEX_", "CLAUDE_", "CODEX_")):
            monkeypatch.delenv(name)


@pytest.mark.usefixtures("clean_env")
def test_uninstall_claude_gives_back_the_user_s_settings_and_removes_the_link_and_plugin(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path)
    mine = machine.mine()
    outside = machine.run("install")
    assert "Wrote the wall (a repository's own paths join it at its first plan)" in outside.stdout
    repo = make_repo(tmp_path / "repo")
    inside = machine.run("install", cwd=repo)  # a second write: the repository's own paths
    assert f"Wrote the wall for {repo}" in inside.stdout, inside.stdout + inside.stderr
    link = machine.bin / "autopilot-codex"
    assert link.is_symlink() and json.loads(machine.settings.read_text()) != mine

    done = machine.run("uninstall", "claude")
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "autopilot-codex: uninstalled from Claude Code; your own settings are kept.",
        f"  wall: removed the entries install and plan added to {machine.settings}",
        f"  PATH: removed the link {link}",
        "  plugin: removed from Claude Code (`claude plugin uninstall autopilot-codex@autopilot-codex`)",
    ]
    assert json.loads(machine.settings.read_text()) == mine
    assert machine.settings.stat().st_mode & 0o777 == 0o640
    assert not link.exists() and not link.is_symlink()
    assert not (machine.home / ".claude" / "plugins" / "installed_plugins.json").exists()
    assert not (machine.home / ".autopilot-codex" / "guarded").exists()  # plan adds no wall now

    again = machine.run("uninstall", "claude")  # Claude Code says the plugin is gone: exit 1
    assert (
        "  wall: no record of one written by install; your Claude Code settings are left"
        in again.stdout
    )


@pytest.mark.usefixtures("clean_env")
def test_uninstall_claude_keeps_what_the_user_changed_and_a_file_of_theirs_and_names_the_command(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path, claude=None)
    machine.env["PATH"] += os.pathsep + str(tmp_path / "shims-later")
    later = tmp_path / "shims-later"
    later.mkdir()
    (later / "claude").write_text(CLAUDE)
    (later / "claude").chmod(0o755)
    assert machine.run("install").code in (0, 1)  # doctor's verdict: no manager's key here
    (later / "claude").unlink()  # Claude Code gone from PATH by the time of the uninstall
    written = json.loads(machine.settings.read_text())
    written["sandbox"]["failIfUnavailable"] = False  # the user's own choice since
    written["permissions"]["deny"].remove(f"Read(/{machine.home}/.aws)")  # one taken out
    del written["sandbox"]["network"]  # and a whole table
    machine.settings.write_text(json.dumps(written))
    link = machine.bin / "autopilot-codex"
    link.unlink()
    link.write_text("#!/bin/sh\necho mine\n")  # the user's own file in the link's place

    done = machine.run("uninstall", "claude")
    assert done.code == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1:] == [
        f"  wall: removed the entries install and plan added to {machine.settings} "
        "(kept 1 value(s) you changed since)",
        f"  PATH: no link to {LAUNCHER.resolve()} in ~/.local/bin or ~/bin; nothing removed",
        "  plugin: `claude` is not on PATH; remove the plugin with "
        "`claude plugin uninstall autopilot-codex@autopilot-codex`",
    ]
    assert done.stdout.startswith(
        "autopilot-codex: uninstalled from Claude Code, all but the plugin"
    )
    assert json.loads(machine.settings.read_text()) == {"sandbox": {"failIfUnavailable": False}}
    assert link.read_text() == "#!/bin/sh\necho mine\n"


@pytest.mark.usefixtures("clean_env")
def test_uninstall_claude_says_when_claude_s_own_command_fails_or_the_settings_are_damaged(
    tmp_path: Path,
) -> None:
    machine = Machine(tmp_path, claude="#!/bin/sh\necho 'plugin not found' >&2\nexit 1\n")
    failed = machine.run("uninstall", "claude")
    assert failed.code == 1
    assert failed.stdout.splitlines()[-1] == (
        "  plugin: `claude plugin uninstall autopilot-codex@autopilot-codex` failed (exit 1): "
        "plugin not found"
    )
    record = machine.home / ".autopilot-codex" / "claude-wall.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({str(machine.settings): [{"at": ["a"], "value": 1}]}))
    machine.settings.parent.mkdir(parents=True)
    machine.settings.write_text("{ damaged")
    damaged = machine.run("uninstall", "claude")
    assert damaged.code == 1
    assert (
        damaged.stdout
        == f"autopilot-codex: cannot read {machine.settings} as JSON ("
        + (damaged.stdout.split(" as JSON (", 1)[1])
    )
    assert record.exists() and machine.settings.read_text() == "{ damaged"
    machine.settings.unlink()
    gone = machine.run("uninstall", "claude")
    assert f"  wall: {machine.settings} is gone; nothing to remove" in gone.stdout.splitlines()
    assert not record.exists()


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["uninstall"], "autopilot-codex uninstall: name the host: claude or codex"),
        (
            ["uninstall", "gemini"],
            "autopilot-codex uninstall: host: 'gemini' is not accepted; choose claude or codex",
        ),
        (
            ["install", "gemini"],
            "autopilot-codex install: host: 'gemini' is not accepted; choose claude or codex",
        ),
    ],
)
def test_a_host_verb_without_a_valid_host_says_so_in_one_line(
    tmp_path: Path, words: list[str], said: str
) -> None:
    machine = Machine(tmp_path)
    done = machine.run(*words)
    assert done.code == 2 and done.stdout == ""
    assert done.stderr == f"{said} (see autopilot-codex {words[0]} --help)\n"


@pytest.mark.usefixtures("clean_env")
def test_install_outside_a_repository_says_the_wall_holds_every_repository(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    machine.settings.parent.mkdir(parents=True)
    machine.settings.write_text("{ not json")  # no wall written: what doctor finds stands
    out = machine.run("install").stdout
    assert "The wall was not written: cannot read" in out
    assert "wall (Claude Code): off, UNGUARDED" in out and "in place" not in out
    machine.settings.unlink()
    out = machine.run("install").stdout
    assert (
        "ok   wall (Claude Code): in place for every repository; a repository's own paths join "
        "it at its first plan"
    ) in out
    assert "wall (Claude Code): partly" not in out and ".git/config" not in out
    assert "fix: `autopilot-codex install --wall`" not in out
    repo = make_repo(tmp_path / "repo")
    inside = machine.run("install", cwd=repo).stdout
    assert "ok   wall (Claude Code): on, the implementer's commands run in its sandbox" in inside
