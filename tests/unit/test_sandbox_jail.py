"""Whether the supervisor's sandbox is up: asked once per process, with fixed arguments, and
said in words a user can act on when it is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import sandbox
from autopilot_codex.sandbox import bwrap, jail, seatbelt
from autopilot_codex.sandbox.rules import Rules


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "tool"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_this_machine_s_bubblewrap_works() -> None:
    known = jail.probe("Linux")
    assert known.ok and known.binary == bwrap.find() and known.note() == ""


def test_a_system_without_a_sandbox_is_said() -> None:
    known = jail.probe("plan9")
    assert not known.ok and "plan9" in known.note() and jail.NOTE in known.note()


def test_no_bubblewrap_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap, "find", lambda: None)
    note = jail.probe("linux").note()
    assert note.startswith(jail.NOTE) and "fix: sudo apt-get install -y bubblewrap" in note


def test_a_bubblewrap_that_cannot_make_namespaces_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing = _script(tmp_path, "echo 'bwrap: No permissions to create new namespace' >&2; exit 1")
    monkeypatch.setattr(bwrap, "find", lambda: failing)
    known = jail.probe("linux")
    assert not known.ok and "No permissions to create new namespace" in known.why
    assert known.fix == jail.USERNS_FIX
    silent = _script(tmp_path, "exit 3")
    monkeypatch.setattr(bwrap, "find", lambda: silent)
    assert jail.probe("linux").why.endswith("exit 3")
    monkeypatch.setattr(bwrap, "find", lambda: str(tmp_path / "gone"))
    assert "No such file" in jail.probe("linux").why


def test_macos_seatbelt_is_probed_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seatbelt, "BINARY", str(tmp_path / "missing"))
    assert "missing" in jail.probe("darwin").why
    # A stand-in for sandbox-exec that runs the program after `-p PROFILE`.
    monkeypatch.setattr(seatbelt, "BINARY", _script(tmp_path, 'shift 2; exec "$@"'))
    known = jail.probe("darwin")
    assert known.ok
    argv = jail.wrap(known, Rules(), "/", ["git", "status"])
    assert argv[0] == seatbelt.BINARY and argv[-2:] == ["git", "status"]
    monkeypatch.setattr(seatbelt, "BINARY", _script(tmp_path, "exit 1"))
    refused = jail.probe("darwin")
    assert not refused.ok and refused.fix == "" and "fix:" not in refused.note()


def test_the_answer_is_kept_for_the_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jail, "_known", None)
    calls: list[str | None] = []

    def probe(system: str | None = None) -> jail.Wall:
        calls.append(system)
        return jail.Wall("linux", False, why="a test")

    monkeypatch.setattr(jail, "probe", probe)
    assert sandbox.wall() is sandbox.wall() and len(calls) == 1
    assert sandbox.note().startswith(jail.NOTE)
    assert sandbox.git_command(["git"], "/w", ["/w/.git"], ["status"]) == ["git"]
    assert sandbox.check_command(["bash"], "/w", {}) == ["bash"]
