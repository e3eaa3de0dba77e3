"""Which cap ends a loop, and the meter it names: a table over the pure `meters.over`."""

from __future__ import annotations

import pytest

from autopilot_codex import meters
from autopilot_codex.state import State, planless

START = 1_800_000_000.0


def loop(**fields: object) -> State:
    return planless(goal="g", worktree="/w", head="h", style="ralph", started_epoch=START, **fields)


@pytest.mark.parametrize(
    ("fields", "budget", "now", "status", "words"),
    [
        ({"implementer_used_usd": 0.6}, 0.5, START, "stopped_budget", "by implementer spend"),
        ({"budget_used_usd": 0.6}, 0.5, START, "stopped_budget", "by manager spend"),
        (
            {"budget_used_usd": 0.3, "implementer_used_usd": 0.3},
            0.5,
            START,
            "stopped_budget",
            "by total: $0.60 of $0.50",
        ),
        ({"implementer_used_usd": 9.0}, None, START, None, ""),
        ({"implementer_tokens": 10, "max_tokens": 10}, None, START, "stopped_tokens", "10 of 10"),
        ({"implementer_tokens": 9, "max_tokens": 10}, None, START, None, ""),
        ({"max_seconds": 60.0}, None, START + 59.9, None, ""),
        ({"max_seconds": 60.0}, None, START + 60, "stopped_duration", "1m of 1m"),
        ({"max_seconds": 60.0}, None, None, None, ""),
    ],
)
def test_which_cap_ends_the_loop(
    fields: dict[str, object], budget: float | None, now: float | None, status: str | None, words: str
) -> None:
    got = meters.over(loop(**fields), now, budget)
    if status is None:
        assert got is None
    else:
        assert got is not None and got[0] == status and words in got[1], got


@pytest.mark.parametrize(
    ("text", "seconds"), [("2h", 7200.0), ("90m", 5400.0), ("1h30m", 5400.0), ("45", 45.0), ("10s", 10.0)]
)
def test_durations(text: str, seconds: float) -> None:
    assert meters.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "", "0", "-5", "1d", "h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        meters.parse_duration(text)
