"""`autopilot-codex -C DIR run ... -- <goal>`: the global -C names the run's repository even when
`--` ends the options (a goal with dashes). It once went in after the goal, so the run worked in
the current directory, with "--cwd DIR" read as words of the goal."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from autopilot_codex import cli
from autopilot_codex.commands import run


def capturing(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argv each `run` gets (the dispatch is what is tested, not the run)."""
    seen: list[list[str]] = []

    def capture(argv: Sequence[str] | None = None, **_: object) -> int:
        seen.append(list(argv or []))
        return 0

    monkeypatch.setattr(run, "main", capture)
    return seen


def test_dash_c_reaches_the_run_before_the_end_of_options(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = capturing(monkeypatch)
    assert cli.main(["-C", "/elsewhere", "run", "--json", "--", "fix", "the", "--verbose", "flag"]) == 0
    (argv,) = seen
    end = argv.index("--")
    assert argv[end + 1 :] == ["fix", "the", "--verbose", "flag"]
    assert argv[argv.index("--cwd") + 1] == "/elsewhere" and argv.index("--cwd") < end


def test_without_dash_c_the_run_gets_no_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = capturing(monkeypatch)
    assert cli.main(["run", "--json", "goal"]) == 0
    assert seen == [["--json", "goal"]]
