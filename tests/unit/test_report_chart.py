"""The report's chart: both meters, stacked, in a time unit that keeps its axis readable, in
dollars to the cent, named for a screen reader, and its numbers again as rows."""

from __future__ import annotations

from autopilot_codex.report import chart
from autopilot_codex.report.timeline import Entry
from autopilot_codex.spend import Spend


def test_the_time_unit_follows_the_span() -> None:
    assert chart.unit_of(4) == ("seconds", 1.0)
    assert chart.unit_of(30 * 60) == ("minutes", 60.0)
    assert chart.unit_of(5 * 3600) == ("hours", 3600.0)


def test_both_meters_end_at_the_loops_figure() -> None:
    entries = [
        Entry("2026-01-01T00:00:00", "plan", "planned", cost_usd=0.004),
        Entry("2026-01-01T00:30:00", "verdict", "continue", cost_usd=0.003),
        Entry("2026-01-01T01:00:00", "verdict", "done"),
    ]
    # The implementer's spend is in the state only: it is reached by the last entry.
    found, unit = chart.rows(entries, Spend(0.007, 1.59, 2.0))
    assert unit == "minutes"
    assert [(r.at, r.manager, r.implementer) for r in found] == [
        (0.0, 0.0, 0.0), (0.0, 0.004, 0.0), (30.0, 0.007, 0.0), (60.0, 0.007, 1.59),
    ]  # fmt: skip
    assert found[-1].total == 1.597
    svg = chart.svg(found, unit)
    assert 'aria-label="Spend over time' in svg and "Pygal" not in svg
    assert "<script" not in svg and "implementer" in svg and "$1.60" in svg
    assert "minutes since start" in svg


def test_a_spend_under_a_cent_has_an_axis_of_its_own_figures() -> None:
    # "$0.00" five times, once: the axis spoke in cents whatever it measured.
    svg = chart.svg([chart.Row(0, 0, 0), chart.Row(1, 0, 0.0045)], "seconds")
    assert "$0.004" in svg and "$0.001" in svg, svg


def test_nothing_spent_draws_nothing() -> None:
    assert chart.rows([], Spend(0, 0)) == ([], "")
    assert chart.rows([Entry("2026-01-01T00:00:00", "plan", "p")], Spend(0, 0)) == ([], "")
    assert chart.svg([], "") == ""


def test_a_spend_no_loop_could_reach_draws_nothing_and_never_breaks_the_page() -> None:
    # A hand-edited state: finite, so every reader takes it, but past what pygal can scale.
    for huge in (1e308, float(10**300), 1e18):
        assert chart.svg([chart.Row(0, 0, 0), chart.Row(1, huge, 1.0)], "seconds") == ""
    # A large but real spend is still drawn.
    assert "<svg" in chart.svg([chart.Row(0, 0, 0), chart.Row(1, 25_000.0, 1.0)], "seconds")
