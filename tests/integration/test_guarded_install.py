"""Guarded by default (issue 33): `install` writes the wall into the user's Claude Code
settings and moves an exported manager's key into the bridge's own file, unless the user says
`--unguarded`; a repository's own paths join the wall when a loop is planned there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex import credentials
from autopilot_codex.commands import guard_install, wall_install
from autopilot_codex.hosts.claude import userwall
from autopilot_codex.wall import Prereqs
from tests.conftest import PLANTED_KEY, state_of
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_wall_status import boundary, cli, plan, write
from tests.integration.test_wall_status import machine as machine  # noqa: F401 (fixture)

WALLED = "Wall: walled (Claude Code's sandbox holds the implementer in)."


def settings_of(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def test_install_outside_a_repository_then_plan_gives_a_walled_loop(
    tmp_path: Path,
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's first path: `install` where the plugin was cloned (no repository), then
    `plan` in a repository; `status` says walled, and the key is out of the environment."""
    elsewhere = tmp_path / "clones"
    elsewhere.mkdir()
    code, out = cli(capsys, "-C", str(elsewhere), "install", "claude")
    settings = settings_of(machine)
    assert (
        f"Wrote the wall (a repository's own paths join it at its first plan) into {settings}:"
        in out
    )
    written = json.loads(settings.read_text())
    assert written["sandbox"]["failIfUnavailable"] is True
    assert {"name": "OPENAI_API_KEY", "mode": "deny"} in written["sandbox"]["credentials"][
        "envVars"
    ]
    assert str(repo) not in settings.read_text()
    stored = credentials.load()
    assert stored is not None and stored.api_key == PLANTED_KEY
    assert (
        f"Stored the manager's key from OPENAI_API_KEY in {credentials.path()}; now remove" in out
    )
    assert PLANTED_KEY not in out
    assert guard_install.REACH in out  # the user's settings hold every session: said

    code, out = plan(capsys, repo, manager)
    assert code == 0, out
    assert f"Wrote the wall for {repo} into {settings}." in out
    assert f"Backed up {settings} to" in out
    assert WALLED in out
    assert json.loads(settings.read_text()) == userwall.merged(written, boundary(repo, machine))
    assert state_of(repo)["wall"] == "on"
    assert "Wall: walled" in cli(capsys, "-C", str(repo), "status")[1]


def test_install_in_a_repository_walls_it_and_says_so_once_it_is_there(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_of(machine)
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert f"Wrote the wall for {repo} into {settings}:" in out
    assert json.loads(settings.read_text()) == boundary(repo, machine)
    out = cli(capsys, "-C", str(repo), "install", "claude", "--wall")[1]
    assert f"The wall for {repo} is already in {settings}." in out
    assert f"The manager's key is stored in {credentials.path()}; now remove" in out
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]  # no backup


def test_install_unguarded_leaves_the_settings_and_the_key_alone(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = settings_of(machine)
    write(settings, {"model": "mine"})
    before = settings.read_bytes()
    code, out = cli(capsys, "-C", str(repo), "install", "claude", "--unguarded")
    assert "Unguarded, as asked: your Claude Code settings were left as they were" in out
    assert settings.read_bytes() == before
    assert [p.name for p in settings.parent.iterdir()] == ["settings.json"]
    assert credentials.load() is None
    code, out = plan(capsys, repo, manager)
    assert code == 0 and "UNGUARDED (no sandbox, Claude Code)" in out
    assert settings.read_bytes() == before  # and plan adds nothing either


def test_unguarded_takes_back_an_earlier_choice_of_the_wall(
    tmp_path: Path,
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli(capsys, "-C", str(tmp_path), "install", "claude")
    assert wall_install.consent().exists()
    cli(capsys, "-C", str(tmp_path), "install", "claude", "--unguarded")
    assert not wall_install.consent().exists()
    before = settings_of(machine).read_bytes()
    assert "UNGUARDED" in plan(capsys, repo, manager)[1]
    assert settings_of(machine).read_bytes() == before


def test_without_bubblewrap_install_writes_nothing_and_names_the_fix(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = (
        False,
        Prereqs(ok=False, missing=("bwrap",), fix="sudo apt-get install -y bubblewrap"),
    )
    monkeypatch.setattr(guard_install, "sandbox_usable", lambda _: missing)
    monkeypatch.setattr(wall_install, "sandbox_usable", lambda _: missing)
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert (
        "The wall was not written: its sandbox needs bwrap, missing here. Fix: `sudo apt-get "
        "install -y bubblewrap`, then `autopilot-codex install` again. Until then loops run "
        "UNGUARDED (the rails only)." in out
    )
    assert not settings_of(machine).exists()
    code, out = plan(capsys, repo, manager)
    assert code == 0 and "UNGUARDED" in out
    assert not settings_of(machine).exists()


def test_a_system_without_a_sandbox_gets_no_wall_and_no_fix_to_run(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    none = (False, Prereqs(ok=False, missing=("a sandbox for plan9",)))
    monkeypatch.setattr(guard_install, "sandbox_usable", lambda _: none)
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert (
        "The wall was not written: its sandbox needs a sandbox for plan9, missing here. Until "
        "then loops run UNGUARDED (the rails only)." in out
    )


def test_settings_that_do_not_read_as_json_are_never_written_over(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = settings_of(machine)
    settings.parent.mkdir(parents=True)
    settings.write_text("{ not json")
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert f"The wall was not written: cannot read {settings} as JSON" in out
    code, out = plan(capsys, repo, manager)
    assert f"The wall was not added for this repository: cannot read {settings} as JSON" in out
    assert settings.read_text() == "{ not json"


def test_the_key_line_says_what_to_run_when_none_is_exported_or_stored(
    repo: Path, machine: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert (
        "No manager's key yet: run `autopilot-codex login` (it asks for the key without echo), "
        "or export OPENAI_API_KEY and run `autopilot-codex login --from-env`." in out
    )
    monkeypatch.setenv("OPENAI_API_KEY", "not a key")
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert "The key was not stored (the key holds spaces or control characters" in out
    assert "run `autopilot-codex login --from-env` yourself." in out
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    cli(capsys, "-C", str(repo), "install", "claude")
    monkeypatch.delenv("OPENAI_API_KEY")
    out = cli(capsys, "-C", str(repo), "install", "claude")[1]
    assert f"The manager's key is stored in {credentials.path()}.\n" in out


def test_plan_beside_a_repositorys_own_settings_writes_nothing_more_and_says_partly(
    repo: Path,
    manager: FakeOpenAI,
    machine: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cli(capsys, "-C", str(repo), "install", "claude")
    before = settings_of(machine).read_bytes()
    write(repo / ".claude" / "settings.json", {"sandbox": {"enabled": False}})
    code, out = plan(capsys, repo, manager)
    assert code == 0 and "UNGUARDED (no sandbox, Claude Code)" in out
    assert "Wrote the wall" not in out
    assert settings_of(machine).read_bytes() == before


def test_install_codex_prints_the_walls_lines_and_writes_none(
    tmp_path: Path, repo: Path, machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Codex's profile names one repository as writable and the user's config.toml holds every
    Codex session: written there, it would make every other repository read-only."""
    config = machine.parent / "codex-home" / "config.toml"
    code, out = cli(capsys, "-C", str(repo), "install", "codex")
    assert code == 0, out
    assert (
        f"For Codex, put these lines at the top of {config} (before any [table]); they were " in out
    )
    assert "default_permissions" not in config.read_text()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = cli(capsys, "-C", str(elsewhere), "install", "codex")[1]
    assert (
        "  wall: run `autopilot-codex doctor --wall` inside the repository you will loop in" in out
    )
    out = cli(capsys, "-C", str(repo), "install", "codex", "--unguarded")[1]
    assert "  wall: none (--unguarded): loops here run with the rails only" in out
    assert "For Codex, put these lines" not in out
