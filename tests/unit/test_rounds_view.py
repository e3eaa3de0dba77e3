"""The live view on a terminal, plain lines elsewhere; and the round's host executable."""

from __future__ import annotations

import io
import re
import sys

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import rollout
from autopilot_codex.rounds.runner import headless, host_base
from autopilot_codex.rounds.view import LiveView, PlainView, make_view
from autopilot_codex.stream import StreamState


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def record() -> rollout.RoundRecord:
    return rollout.RoundRecord(
        "round",
        "r",
        2,
        1,
        "verify",
        False,
        1.0,
        2.0,
        "ok",
        0,
        ["exit"],
        [],
        0.1,
        None,
        "Bash: pytest",
        "All good.",
        "complete",
    )


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    view = make_view(out)
    assert isinstance(view, PlainView)
    view.round_started(2, 10, "verify", 2)
    state = StreamState("claude", last_action="Bash: pytest")
    view.update(state)
    view.update(state)  # unchanged: no second line
    view.round_ended(record(), 0.3, "All good.")
    assert out.getvalue().splitlines() == [
        "round 2/10 verify (retry 1): started",
        "  Bash: pytest",
        "round 2 verify: ok, exit, 0 files changed, $0.30 so far -> complete",
        "  All good.",
    ]


def test_live_view_on_a_terminal() -> None:
    out = Terminal()
    view = make_view(out)
    assert isinstance(view, LiveView)
    view.round_started(3, 10, "implement", 1)
    view.update(StreamState("claude", last_action="Write: a.py", cost_usd=0.5))
    panel = view._render()
    assert "round 3/10 implement" in str(panel)
    assert "Write: a.py" in str(panel)
    assert "$0.50 so far" in str(panel)
    view.round_ended(record(), 0.5, "All good.")
    view.close()
    assert "round 2 verify: ok" in out.getvalue()


def screen(raw: str) -> list[str]:
    """The lines a terminal shows after `raw`, for the few controls rich's live display writes:
    newline, carriage return, cursor up, erase line; colours and cursor visibility dropped."""
    lines, row, col = [""], 0, 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+", raw):
        if token == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif token == "\r":
            col = 0
        elif token.startswith("\x1b["):
            if token.endswith("A"):
                row = max(0, row - int(token[2:-1] or 1))
            elif token == "\x1b[2K":
                lines[row] = ""
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + token + line[col + len(token) :]
            col += len(token)
    return [line for line in lines if line.strip()]


def test_the_live_panel_leaves_no_frame_after_the_final_line() -> None:
    """Issue 27, item 9: the panel's last frame stayed on screen below the run's final line."""
    out = Terminal()
    view = make_view(out)
    view.round_started(1, 2, "implement", 1)
    view.update(StreamState("claude", last_action="Write: a.py", cost_usd=0.5))
    view.round_ended(record(), 0.5, "All good.")
    view.note("autopilot-codex: run complete")
    view.close()
    shown = screen(out.getvalue())
    assert shown[-1] == "autopilot-codex: run complete", shown
    assert not any("so far" in line and "round 1/2" in line for line in shown), shown
    assert any(line.startswith("round 2 verify: ok") for line in shown), shown


def test_host_base_override() -> None:
    claude, codex = headless("claude"), headless("codex")
    assert host_base("claude", claude, {}) == ["claude"]
    env = {"AUTOPILOT_CODEX_CODEX_CMD": f"{sys.executable} 'my fake.py'"}
    assert host_base("codex", codex, env) == [sys.executable, "my fake.py"]
    with pytest.raises(BridgeError, match="unknown host 'gemini'"):
        headless("gemini")
