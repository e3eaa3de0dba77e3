"""The live view on a terminal, plain lines elsewhere; and the round's host executable."""

from __future__ import annotations

import io
import sys

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import rollout
from autopilot_codex.rounds.runner import headless, host_base
from autopilot_codex.rounds.stream import StreamState
from autopilot_codex.rounds.view import LiveView, PlainView, make_view


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


def test_host_base_override() -> None:
    claude, codex = headless("claude"), headless("codex")
    assert host_base("claude", claude, {}) == ["claude"]
    env = {"AUTOPILOT_CODEX_CODEX_CMD": f"{sys.executable} 'my fake.py'"}
    assert host_base("codex", codex, env) == [sys.executable, "my fake.py"]
    with pytest.raises(BridgeError, match="unknown host 'gemini'"):
        headless("gemini")
