"""The contract every host keeps, run against Claude Code, Codex and a third host that exists
only in the tests (`tests/fakes/third_host`, plugged in by one registry line below): its hook
stdin read and its answers written through the real hook path, its protected files and its
credentials named, its spend reader optional, and an unknown host refused in clear words.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex import gate, hosts
from autopilot_codex.__main__ import run as launcher
from autopilot_codex.cli import main as cli_main
from autopilot_codex.config import Config
from autopilot_codex.hookio import ALLOW, parse
from autopilot_codex.host import Host, HostSet
from autopilot_codex.runfiles import matches
from tests.fakes import host_card, third_host
from tests.fakes.host_card import Card, Has
from tests.rails_calls import check_command

CARDS = [host_card.CLAUDE, host_card.CODEX, third_host.CARD]
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd")
GOAL = "Make the tests pass."


def _third() -> Host:
    return third_host.HOST


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The third host's one registry line."""
    monkeypatch.setattr(hosts, "HOSTS", hosts.HOSTS.with_member("third", _third))


@pytest.fixture(params=CARDS, ids=[c.host.name for c in CARDS])
def card(request: pytest.FixtureRequest) -> Card:
    card: Card = request.param
    return card


def hook(
    name: str,
    event: str,
    data: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[str, str]:
    """stdin → (stdout, stderr) of `autopilot-codex hook EVENT --host NAME`, in this process."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(data).encode())))
    argv = ["autopilot-codex", "hook", event, "--host", name]
    monkeypatch.setattr(sys, "argv", argv)
    capsys.readouterr()
    assert launcher() == 0
    out = capsys.readouterr()
    return out.out, out.err


def answer(text: str) -> object:
    return json.loads(text) if text.strip() else {}


def start(card: Card, repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """A ralph loop in `repo` owned by session s-1 of this host; the payloads' shared fields."""
    argv = ["-C", str(repo), "ralph", "--host", card.host.name, "--session-id", "s-1"]
    assert cli_main([*argv, "--completion-promise", "ALL GREEN", *GOAL.split()]) == 0
    capsys.readouterr()
    return {"session_id": "s-1", "cwd": str(repo)}


def test_hook_stdin_to_stdout_is_golden_for_each_answer(
    card: Card, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = start(card, repo, capsys)

    def said(event: str, data: dict[str, Any]) -> object:
        return answer(hook(card.host.name, event, {**base, **data}, capsys, monkeypatch)[0])

    push = card.shell("git status && git push --force origin main")
    assert said("PreToolUse", push) == card.deny(Has("[force-push]"))
    assert said("PreToolUse", card.shell("git status")) == {}
    settings = card.write(str(repo / card.settings_file))
    assert said("PreToolUse", settings) == card.deny(Has("[host-settings]"))
    assert said("PostToolUse", card.shell("pytest")) == {}
    assert said("Stop", card.stop("Still working.", False)) == card.block(
        Has(GOAL), Has("Ralph iteration 2/50")
    )
    said("PostToolUse", card.shell("pytest"))
    done = said("Stop", card.stop("All tests pass.\n<promise>ALL GREEN</promise>", True))
    assert done == card.note(Has("ralph done: promise kept at iteration 2"))


@pytest.mark.parametrize("event", EVENTS)
def test_an_allow_is_silent_on_every_event(card: Card, event: str) -> None:
    assert card.host.render(event, ALLOW) == ""


def test_the_payload_reads_as_the_neutral_event_and_the_gate_reads_the_same(card: Card) -> None:
    """The gate reads the session and the folder before any host is loaded: from the fields
    every host names them by (`gate.SESSION_FIELDS`, `gate.CWD_FIELDS`)."""
    data = {"session_id": "s-9", "cwd": "/r", **card.shell("ls -la")}
    event = parse(json.dumps(data).encode(), "PreToolUse", card.host)
    assert (event.session_id, event.cwd) == ("s-9", "/r")
    assert gate.payload_field(data, gate.SESSION_FIELDS) == event.session_id
    assert gate.payload_field(data, gate.CWD_FIELDS) == event.cwd
    assert card.host.shell_command(event.tool_name, event.tool_input) == "ls -la"
    wrote = parse(json.dumps(card.write("/r/a.py")).encode(), "PreToolUse", card.host)
    assert card.host.touched_paths(wrote.tool_name, wrote.tool_input) == ["/r/a.py"]
    assert wrote.tool_name in card.host.edit_tools
    last = parse(json.dumps(card.stop("Done.", True)).encode(), "Stop", card.host)
    assert (last.last_assistant_message, last.stop_hook_active) == ("Done.", True)


def test_its_protected_files_are_named(card: Card, tmp_path: Path) -> None:
    host = card.host
    assert host.is_settings_file(str(tmp_path / card.settings_file))
    assert not host.is_settings_file(str(tmp_path / "src" / "settings.json"))
    # The wall and the run-file comparison keep them, whichever host runs the loop.
    assert matches(card.settings_file, host.run_files)
    assert matches(card.settings_file, hosts.roster().run_files())
    line = f"echo '{{}}' > {card.settings_file}"
    assert "[host-settings]" in (check_command(line, Config(), tmp_path, str(tmp_path)) or "")


def test_its_credentials_are_named(card: Card, tmp_path: Path) -> None:
    host = card.host
    home = tmp_path / "home"
    logins = host.logins({}, home)
    assert logins and all(home in login.parents for login in logins)
    stores = hosts.roster().credential_stores(home, {})
    assert set(logins) <= set(stores)
    if host.config_env:
        moved = tmp_path / "moved"
        assert all(moved in p.parents for p in host.logins({host.config_env: str(moved)}, home))


def test_its_spend_reader_is_optional(card: Card) -> None:
    host = card.host
    reader = host.spend_reader()
    if card.spend_record is None:
        assert reader is None
        return
    record = f"~/{card.spend_record}"
    assert reader is not None and host.is_spend_record(record)
    assert hosts.roster().is_spend_record(record)
    assert not host.is_spend_record("~/notes.jsonl")


def test_an_unknown_host_is_refused_in_clear_words(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = start(host_card.CLAUDE, repo, capsys)
    stop = {**base, **host_card.CLAUDE.stop("Done.", False)}
    out, err = hook("nowhere", "Stop", stop, capsys, monkeypatch)
    assert out == ""
    assert "ignored a Stop call: unknown host 'nowhere'; known: claude, codex, third" in err
    with pytest.raises(SystemExit):
        cli_main(["-C", str(repo), "ralph", "--host", "nowhere", "Go."])
    assert "invalid choice: 'nowhere'" in capsys.readouterr().err


def test_a_host_without_a_boundary_is_left_out_of_the_wall(repo: Path) -> None:
    """`doctor --wall` lays the wall into the settings of each host that has a boundary."""
    from autopilot_codex.commands.wall_install import wall_install

    assert third_host.HOST.boundary() is None
    said = wall_install(repo)
    assert f"Wrote the wall for {repo}" in said and f"They name this worktree, {repo}" in said
    assert third_host.HOST.label not in said


def test_a_host_without_a_boundary_keeps_no_wall_in_its_settings(repo: Path) -> None:
    """After a guarded install, `plan` extends the wall of a host that keeps it in the user's
    settings; a host without a boundary has none to extend."""
    from autopilot_codex.commands.wall_install import consent, extend
    from autopilot_codex.hostwall import HostWall

    consent().parent.mkdir(parents=True, exist_ok=True)
    consent().write_text("third\n")
    wall = HostWall("third", "off", ("no sandbox",))
    assert extend(wall, repo) is wall


def test_a_host_without_a_config_folder_moves_nothing() -> None:
    class Fixed(third_host.Third):
        config_env: str | None = None

    roster = HostSet((host_card.CLAUDE.host, Fixed()))
    assert roster.config_envs() == ("CLAUDE_CONFIG_DIR",)
