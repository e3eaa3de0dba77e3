"""The implementer's text on the user's terminal: a round's tool calls and last message are
shown as a rounds run goes. A terminal obeys the control sequences in what it prints (set the
clipboard with OSC 52, rewrite or clear the lines above, retitle the window, hide text), so a
round could write to the user's clipboard or paint over the driver's own lines. Through the
real driver and the fake host: what reaches the terminal holds no control character."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from autopilot_codex.cli import main as cli_main
from autopilot_codex.commands.run import main
from tests.conftest import Script

# Clipboard write, erase line, cursor up, title: each a sequence a terminal obeys.
SEQUENCES = "\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2K\x1b[1A\x1b]0;done\x07\x9b2J\r"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> None:
    from autopilot_codex.rounds import driver

    monkeypatch.setattr(driver, "sleep", lambda _s: None)


def test_a_rounds_run_prints_no_control_sequence_of_the_implementer(
    repo: Path, script: Script
) -> None:
    script(
        [
            {
                "write": {"a.txt": "a\n"},
                "shell": f"true '{SEQUENCES}'",
                "commit": "a",
                "say": f"Done{SEQUENCES}\n::potter(ready)",
            },
            {"say": f"Checked{SEQUENCES} all.\n::potter(exit)"},
        ]
    )
    out = io.StringIO()
    code = main(["add a", "--implementer", "claude", "--cwd", str(repo)], stdout=out)
    shown = out.getvalue()
    assert code == 0, shown
    assert "Done" in shown and "true" in shown and "\\u001b]52;c;" in shown
    assert not CONTROL.findall(shown), shown


def test_logs_and_status_print_no_control_sequence_of_the_implementer(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's records quote the round (its message, its tool calls); the views read them."""
    script(
        [
            {"write": {"a.txt": "a\n"}, "commit": "a", "say": f"Done{SEQUENCES}\n::potter(ready)"},
            {"say": f"Checked{SEQUENCES} all.\n::potter(exit)"},
        ]
    )
    assert main(["add a", "--implementer", "claude", "--cwd", str(repo)], stdout=io.StringIO()) == 0
    for verb in (["logs"], ["logs", "--json"], ["status"], ["report"], ["loops"]):
        assert cli_main(["-C", str(repo), *verb]) == 0, verb
        shown = capsys.readouterr()
        assert not CONTROL.findall(shown.out + shown.err), (verb, shown)
