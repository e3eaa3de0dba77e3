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
    fields: dict[str, object],
    budget: float | None,
    now: float | None,
    status: str | None,
    words: str,
) -> None:
    got = meters.over(loop(**fields), now, budget)
    if status is None:
        assert got is None
    else:
        assert got is not None and got[0] == status and words in got[1], got


def test_clocked_reads_the_clock_once_and_the_cap_reached_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[float] = []

    def clock() -> float:
        reads.append(START + 60)
        return reads[-1]

    monkeypatch.setattr(meters, "clock", clock)
    now, cap = meters.clocked(loop(max_seconds=60.0), None)
    assert (now, reads) == (START + 60, [START + 60])
    assert cap is not None and cap[0] == "stopped_duration"
    assert meters.clocked(loop(max_seconds=61.0), None)[1] is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2h", 7200.0), ("90m", 5400.0), ("1h30m", 5400.0), ("45", 45.0), ("10s", 10.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert meters.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["soon", "", "0", "-5", "1d", "h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError):
        meters.parse_duration(text)


def reading(**fields: object) -> meters.Reading:
    base: dict[str, object] = {
        "manager_usd": 0.0,
        "implementer_usd": 0.0,
        "tokens": 0,
        "elapsed_s": 0.0,
        "budget_usd": None,
    }
    return meters.Reading(**{**base, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "done", "text"),
    [
        # $0.50 of $2.00 over 2 iterations: $0.25 each, so 6 more.
        (
            {"manager_usd": 0.2, "implementer_usd": 0.3, "budget_usd": 2.0},
            2,
            "At this rate the budget lasts about 6 more iterations.",
        ),
        (
            {"tokens": 900, "max_tokens": 1000},
            3,
            "At this rate the token cap lasts about 0 more iterations.",
        ),
        (
            {"implementer_usd": 1.0, "budget_usd": 3.0, "elapsed_s": 600.0, "max_seconds": 1200.0},
            1,
            "At this rate the budget lasts about 2 more iterations; the time cap about 1 more.",
        ),
        ({"implementer_usd": 1.0, "budget_usd": 3.0}, 0, ""),  # nothing ended yet
        ({"budget_usd": 3.0}, 2, ""),  # nothing spent: no rate
        ({"implementer_usd": 1.0}, 2, ""),  # nothing capped
        (
            {"implementer_usd": 2.5, "budget_usd": 2.0},
            2,
            "At this rate the budget lasts about 0 more iterations.",
        ),
    ],
)
def test_projection(fields: dict[str, object], done: int, text: str) -> None:
    assert meters.projection(reading(**fields), done) == text


def test_a_round_is_its_own_unit() -> None:
    r = reading(implementer_usd=0.1, budget_usd=0.2, implementer="rounds")
    assert meters.projection(r, 1, "round") == "At this rate the budget lasts about 1 more round."
    found = meters.exceeded(reading(implementer_usd=0.3, budget_usd=0.2, implementer="rounds"))
    assert found is not None and found[0] == "budget"
    assert found[1].startswith("budget used up by rounds spend: $0.30 of $0.20")


def test_status_projects_an_autopilot_loop_from_its_verdicts() -> None:
    state = planless(
        goal="g", worktree="/w", head="h", style="autopilot", started_epoch=START,
        iteration=2, budget_used_usd=0.2, implementer_used_usd=0.3, max_seconds=3600.0,
    )  # fmt: skip
    lines = meters.status_lines(state, START + 600, budget_usd=2.0, reads_spend=True)
    assert lines[0] == "Spend: manager $0.20 · implementer $0.30 · total $0.50 of $2.00"
    assert lines[1] == "Tokens: 0 · time 10m / 1h"
    assert (
        lines[2]
        == "At this rate the budget lasts about 6 more iterations; the time cap about 10 more."
    )
    stopped = meters.status_lines(
        state.evolve(status="stopped"), START, budget_usd=2.0, reads_spend=False
    )
    assert not any(line.startswith("At this rate") for line in stopped)
    assert stopped[-1].startswith("The implementer's spend is not seen on this host")


def test_an_ended_loops_clock_stops_at_its_last_event(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meters, "clock", lambda: START + 900)
    ended = planless(goal="g", worktree="/w", head="h", style="ralph", started_epoch=START)
    ended = ended.evolve(status="done")
    at = "2027-01-15T08:00:04+00:00"  # START + 4 s
    events: list[dict[str, object]] = [{"ts": at}, {"ts": "not a time"}, {"event": "x"}]
    assert meters.until(ended, events) == START + 4
    # A loop with no readable time in its ledger, or one still going, reads now.
    assert meters.until(ended, [{"ts": "bad"}]) == START + 900
    assert meters.until(ended.evolve(status="paused"), events) == START + 900
    # A time past now (a clock set back) never makes the loop younger than now allows.
    assert meters.until(ended, [{"ts": "2099-01-01T00:00:00Z"}]) == START + 900
