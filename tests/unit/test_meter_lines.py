"""What `status` says of each meter, how a duration is written and read, and the exact edges of
the caps: pinned where the mutation audit found changes no test noticed."""

from __future__ import annotations

import pytest

from autopilot_codex import hosts, meters
from autopilot_codex.state import State, planless

START = 1_800_000_000.0


def loop(**fields: object) -> State:
    return planless(goal="g", worktree="/w", head="h", style="ralph", started_epoch=START, **fields)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.9, "0s"),
        (45, "45s"),
        (60, "1m"),
        (200, "3m20s"),
        (3600, "1h"),
        (7500, "2h5m"),
        (7505, "2h5m"),
    ],
)
def test_a_duration_is_written_short(seconds: float, text: str) -> None:
    assert meters.duration(seconds) == text


def test_thirty_days_is_the_longest_duration() -> None:
    assert meters.parse_duration("720h") == 30 * 24 * 3600
    assert meters.parse_duration(" 1H30M ") == 5400.0
    assert meters.parse_duration("0.5") == 0.5
    with pytest.raises(ValueError, match="at most 30 days"):
        meters.parse_duration(str(30 * 24 * 3600 + 1))


def test_the_time_spent_never_runs_backwards() -> None:
    assert meters.elapsed(loop(), START - 50) == 0.0
    assert meters.elapsed(loop(), START + 50) == 50.0


def test_a_budget_reached_exactly_stops_and_says_by_how_much() -> None:
    got = meters.over(loop(budget_used_usd=0.2, implementer_used_usd=0.3), None, 0.5)
    assert got is not None and got[0] == "stopped_budget"
    assert "$0.50 of $0.50 (manager $0.20, implementer $0.30; $0.00 over)" in got[1]
    assert meters.over(loop(budget_used_usd=0.2, implementer_used_usd=0.29), None, 0.5) is None


def test_the_implementer_is_named_when_it_alone_used_the_budget() -> None:
    got = meters.over(loop(budget_used_usd=0.5, implementer_used_usd=0.5), None, 0.5)
    assert got is not None and "by implementer spend" in got[1]
    got = meters.over(loop(budget_used_usd=0.5, implementer_used_usd=0.1), None, 0.5)
    assert got is not None and "by manager spend" in got[1]


def test_the_token_and_time_reasons_say_how_far_over() -> None:
    got = meters.over(loop(implementer_tokens=15, max_tokens=10), None, None)
    assert got == ("stopped_tokens", "token limit reached: 15 of 10 tokens (5 over)")
    got = meters.over(loop(max_seconds=60.0), START + 200, None)
    assert got == ("stopped_duration", "time limit reached: 3m20s of 1m (2m20s over)")
    assert meters.over(loop(implementer_tokens=15), START + 10**6, None) is None


def test_status_shows_each_meter_against_its_cap() -> None:
    state = loop(
        budget_used_usd=0.004,
        implementer_used_usd=1.5,
        implementer_tokens=1200,
        max_tokens=5000,
        max_seconds=3600.0,
    )
    lines = meters.status_lines(state, START + 200, budget_usd=2.0, reads_spend=True)
    assert lines == [
        "Spend: manager <$0.01 · implementer $1.50 · total $1.50 of $2.00",
        "Tokens: 1200 / 5000 · time 3m20s / 1h",
    ]


def test_status_says_what_it_cannot_see() -> None:
    state = loop(implementer_unpriced=("claude-future-9", "x"))
    lines = meters.status_lines(state, START - 5, budget_usd=None, reads_spend=False)
    assert lines == [
        "Spend: manager $0.00 · implementer ~$0.00 · total ~$0.00 "
        "(~ estimated: claude-future-9, x priced by rule) (no budget)",
        "Tokens: 0 · time 0s",
        "The implementer's spend is not seen on this host: the budget counts the manager only.",
        "Priced at the dearest row (not in the price table): claude-future-9, x",
    ]


def test_a_cent_is_shown_as_a_cent() -> None:
    lines = meters.status_lines(
        loop(budget_used_usd=0.01), START, budget_usd=None, reads_spend=True
    )
    assert lines[0].startswith("Spend: manager $0.01 ·")


def test_status_knows_which_host_shows_the_implementer_s_spend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(meters, "clock", lambda: START + 60)
    claude = meters.spend_lines(loop(host="claude"), None, [], hosts.get("claude"))
    codex = meters.spend_lines(loop(host="codex"), None, [], hosts.get("codex"))
    assert claude == [
        "Spend: manager $0.00 · implementer $0.00 · total $0.00 (no budget)",
        "Tokens: 0 · time 1m",
    ]
    # Both hosts' records are read now (Codex: its session rollout), so neither says "not seen".
    assert codex == claude


def test_the_total_is_the_manager_s_and_the_implementer_s_spend() -> None:
    assert meters.total_usd(loop(budget_used_usd=0.25, implementer_used_usd=1.5)) == 1.75


def test_a_ralph_loop_is_timed_from_its_start_against_its_cap() -> None:
    from autopilot_codex.styles.ralph.record import RalphRecord

    lines = meters.status_lines(
        loop(own=RalphRecord(prompt="p"), iteration=3, max_seconds=600.0, budget_used_usd=0.5),
        START + 300,
        budget_usd=2.0,
        reads_spend=True,
    )
    # 300 s since the loop began, against its cap (the envelope's: ralph keeps no other).
    assert lines[1] == "Tokens: 0 · time 5m / 10m"
    # Two iterations ended: the budget lasts 6 more at $0.25 each; the time cap 2 more.
    assert (
        lines[2]
        == "At this rate the budget lasts about 6 more iterations; the time cap about 2 more."
    )


def test_a_meter_with_nothing_spent_yet_is_passed_over_and_the_next_still_projected() -> None:
    r = meters.Reading(0.0, 0.0, 0, elapsed_s=120.0, budget_usd=5.0, max_seconds=600.0)
    assert meters.projection(r, 2) == "At this rate the time cap lasts about 8 more iterations."


def test_a_reading_without_token_or_time_caps_has_none() -> None:
    r = meters.Reading(0.0, 0.0, 7, elapsed_s=30.0, budget_usd=None)
    assert meters.meter_lines(r)[1] == "Tokens: 7 · time 30s"


def test_status_names_every_record_found_tampered_with() -> None:
    from autopilot_codex.state import SpendCursor

    cursors = [
        SpendCursor(path="/h/a.jsonl"),
        SpendCursor(path="/h/b.jsonl", tampered="cut short"),
        SpendCursor(path="/h/c.jsonl", tampered="rewritten"),
    ]
    lines = meters.status_lines(
        loop(spend_cursors=cursors), START, budget_usd=None, reads_spend=True
    )
    told = [line for line in lines if "tampered" in line]
    assert told == [
        "The host's record /h/b.jsonl was found tampered with (cut short): the spend already "
        "counted is kept (the ledger's spend.tampered).",
        "The host's record /h/c.jsonl was found tampered with (rewritten): the spend already "
        "counted is kept (the ledger's spend.tampered).",
    ]


def test_a_cap_of_nothing_is_no_cap_in_words() -> None:
    lines = meters.status_lines(loop(), START, budget_usd=0.0, reads_spend=True)
    assert lines[0] == "Spend: manager $0.00 · implementer $0.00 · total $0.00 (no budget)"


def test_an_ended_loop_s_status_shows_its_time_up_to_its_last_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(meters, "clock", lambda: START + 900)
    events: list[dict[str, object]] = [{"ts": "2027-01-15T08:01:00+00:00"}]  # START + 60 s
    lines = meters.spend_lines(loop(status="done"), None, events, hosts.get("claude"))
    assert lines[1] == "Tokens: 0 · time 1m"
    lines = meters.spend_lines(loop(status="done"), None, [], hosts.get("claude"))
    assert lines[1] == "Tokens: 0 · time 15m"
