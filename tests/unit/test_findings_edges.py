"""The review-findings ledger at its edges: the defaults the config gives, what is clipped and
listed, and that its records are values. Pinned where the mutation audit found changes that no
test noticed."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.config import Config
from autopilot_codex.manager.schemas import Review
from autopilot_codex.styles.autopilot.convergence import Rules
from autopilot_codex.styles.autopilot.findings import (
    Ledger,
    Raised,
    approved,
    in_generation,
    listing,
)
from autopilot_codex.styles.autopilot.record import evolve, of
from tests.unit.test_convergence_rules import fix, found, judged, raised, step
from tests.unit.test_reducer import make_state


def test_the_rules_without_settings_are_the_config_defaults() -> None:
    assert Rules() == Rules.of(Config()) == Rules(2, 12, 3)


def test_a_long_recommendation_is_clipped_at_1500_characters() -> None:
    exact = step(Ledger(), Raised("high", "a.py", "t1", "r" * 1500)).ledger.entries[0]
    assert exact.recommendation == "r" * 1500
    long = step(Ledger(), Raised("high", "a.py", "t2", "r" * 1501)).ledger.entries[0]
    assert long.recommendation.startswith("r" * 1460) and "characters cut" in long.recommendation


def test_the_listing_shows_twenty_findings_unless_told() -> None:
    ledger = step(Ledger(), *(raised(f"finding {n}") for n in range(25))).ledger
    assert len(listing(ledger, "T1")) == 20
    assert len(listing(ledger, "T1", limit=3)) == 3


def test_the_ledger_s_records_are_values_not_records_to_edit() -> None:
    merged = step(Ledger(), raised("one"))
    for record in (merged, merged.ledger, merged.ledger.entries[0], Rules()):
        field = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)


def test_a_long_title_is_clipped_at_300_characters() -> None:
    exact = step(Ledger(), Raised("high", "a.py", "t" * 300, "r")).ledger.entries[0]
    assert exact.title == "t" * 300
    long = step(Ledger(), Raised("high", "a.py", "t" * 301, "r")).ledger.entries[0]
    assert "characters cut" in long.title


def test_a_finding_kept_and_closed_at_once_stops_nothing_after_it() -> None:
    ledger = step(Ledger(), raised("one")).ledger
    merged = step(ledger, raised("one", "F1"), raised("two"), closed=("F1",), key="d2")
    assert [e.title for e in merged.new] == ["two"]


def test_a_finding_said_twice_in_one_review_stops_nothing_after_it() -> None:
    ledger = step(Ledger(), raised("one")).ledger
    merged = step(ledger, raised("one"), raised("one"), raised("two"), key="d2")
    assert [(e.id, e.title) for e in merged.ledger.entries] == [("F1", "one"), ("F2", "two")]


def test_a_new_finding_said_twice_in_its_first_review_gets_one_id() -> None:
    merged = step(Ledger(), raised("one"), raised("one"), raised("two"))
    assert [(e.id, e.title) for e in merged.ledger.entries] == [("F1", "one"), ("F2", "two")]
    assert [e.id for e in merged.new] == ["F1", "F2"]
    assert [e.id for e in merged.said] == ["F1", "F2"]


def test_the_same_words_on_another_file_are_another_finding() -> None:
    ledger = step(Ledger(), raised("one", file="a.py")).ledger
    merged = step(ledger, raised("one", file="b.py"), key="d2")
    assert [e.id for e in merged.new] == ["F2"]


def test_an_approval_fixes_the_task_s_findings_as_one_more_review() -> None:
    ledger = step(Ledger(), raised("one")).ledger
    done = approved(ledger, "T1")
    assert done.reviews == ledger.reviews + 1 and done.idle_reviews == 0
    assert [(e.status, e.seen_review) for e in done.entries] == [("fixed", done.reviews)]


def test_a_new_ledger_is_of_the_loop_s_first_generation() -> None:
    # Loaded for a loop that never resumed, its idle count is not started afresh.
    assert in_generation(Ledger(reviews=5, idle_reviews=2), 0).idle_reviews == 2
    assert in_generation(Ledger(reviews=5, idle_reviews=2), 1).idle_reviews == 0


def test_an_empty_ledger_file_reads_as_a_new_ledger() -> None:
    assert Ledger.from_json("{}") == Ledger()


def test_a_raised_finding_is_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        raised("one").title = ""  # type: ignore[misc]


def test_standing_means_open_or_disputed_and_of_the_task_asked() -> None:
    ledger = step(Ledger(), raised("one"), raised("two")).ledger
    fixed = approved(step(ledger, raised("one"), key="d2").ledger, "T2")
    assert [e.title for e in fixed.standing("T1")] == ["one"]
    assert fixed.standing("T2") == []
    assert [e.title for e in fixed.standing()] == ["one"]


def test_a_finding_said_again_keeps_the_next_one_standing_too() -> None:
    ledger = step(Ledger(), raised("one"), raised("two"), raised("three")).ledger
    merged = step(ledger, raised("one"), raised("three"), key="d2")
    assert [(e.title, e.status) for e in merged.ledger.entries] == [
        ("one", "open"),
        ("two", "fixed"),
        ("three", "open"),
    ]


def test_the_cached_review_of_the_diff_says_what_was_delivered() -> None:
    state, decision, _ = judged(make_state(), fix(found("one")), Ledger())
    last = of(state).last_review
    assert last is not None and "(finding F1)" in decision.reason
    cached = [r.reason for r in of(state).reviewed if r.diff_hash == last.diff_hash]
    assert cached == [decision.reason]


def test_an_approval_s_own_findings_open_nothing() -> None:
    state, _, ledger = judged(make_state(), fix(found("one")), Ledger())
    review = Review(decision="approve", summary="ok", findings=[found("nit")], revert_files=[])
    _, decision, ledger = judged(state, review, ledger, key="d2")
    assert not decision.blocks
    assert [(e.title, e.status) for e in ledger.entries] == [("one", "fixed")]


def test_a_waiting_background_review_of_the_diff_says_what_was_delivered() -> None:
    state, _, ledger = judged(make_state(), fix(found("one")), Ledger())
    waiting = evolve(state, pending_review=of(state).last_review)
    state, decision, _ = judged(waiting, fix(found("one")), ledger)
    assert decision.blocks
    assert (kept := of(state).pending_review) is not None and kept.reason == decision.reason


def test_an_advisory_finding_said_again_is_the_same_finding_by_its_words_or_its_id() -> None:
    from autopilot_codex.styles.autopilot.findings import advisory_lines, merge, waive_outside

    def review(ledger: Ledger, *said: Raised) -> Ledger:
        return merge(
            ledger,
            task="T2",
            raised=list(said),
            closed_ids=[],
            diff_key="k",
            now="t",
            max_verbatim=2,
        ).ledger

    readme = Raised("low", "README.md", "no usage section", "add one")
    first = review(Ledger(), readme)
    ledger = waive_outside(first, ["F1"], ["a.py"])
    # Twice in one review is once; named by its id, it is the same too (another task's).
    ledger = review(ledger, readme, readme)
    ledger = review(ledger, dataclasses.replace(readme, id="F1", title="no usage, still"))
    assert [(e.id, e.status, e.verbatim) for e in ledger.entries] == [("F1", "waived", 3)]
    assert ledger.idle_reviews == 2
    assert advisory_lines(ledger, just_repeated=True) == [
        "F1 [advisory, low, raised 3x] no usage section (README.md)"
    ]
    ledger = review(ledger, readme)
    assert advisory_lines(ledger, just_repeated=True) == []  # shown once
    assert len(advisory_lines(ledger)) == 1 and ledger.idle_reviews == 3


def _advisory(ledger: Ledger, *said: Raised, task: str = "T2") -> Ledger:
    from autopilot_codex.styles.autopilot.findings import merge

    return merge(
        ledger, task=task, raised=list(said), closed_ids=[], diff_key="k", now="t",
        max_verbatim=2,
    ).ledger  # fmt: skip


def test_an_advisory_finding_said_twice_in_one_review_stops_nothing_after_it() -> None:
    from autopilot_codex.styles.autopilot.findings import waive_outside

    readme = Raised("low", "README.md", "no usage section", "add one")
    ledger = waive_outside(_advisory(Ledger(), readme), ["F1"], ["a.py"])
    ledger = _advisory(ledger, readme, readme, Raised("high", "a.py", "off by one", "fix it"))
    assert [(e.id, e.status, e.title) for e in ledger.entries] == [
        ("F1", "waived", "no usage section"),
        ("F2", "open", "off by one"),
    ]


def _two_advisories() -> Ledger:
    """F1 raised twice, F2 three times by the last review: only F2 is just repeated."""
    from autopilot_codex.styles.autopilot.findings import waive_outside

    one = Raised("low", "README.md", "no usage section", "add one")
    two = Raised("low", "NOTES.md", "stale notes", "update them")
    ledger = waive_outside(_advisory(Ledger(), one, two), ["F1", "F2"], ["a.py"])
    ledger = _advisory(ledger, one, two)
    return _advisory(ledger, two)


def test_an_advisory_not_just_repeated_hides_none_after_it() -> None:
    from autopilot_codex.styles.autopilot.findings import advisory_lines

    ledger = _two_advisories()
    assert [e.verbatim for e in ledger.entries] == [2, 3]
    assert advisory_lines(ledger, just_repeated=True) == [
        "F2 [advisory, low, raised 3x] stale notes (NOTES.md)"
    ]


def test_a_prompt_shows_only_the_advisories_just_raised_the_third_time() -> None:
    from autopilot_codex.styles.autopilot.findings import standing_lines

    _, repeated = standing_lines(_two_advisories(), "T2")
    assert repeated == ["F2 [advisory, low, raised 3x] stale notes (NOTES.md)"]


def test_a_prompt_shows_twenty_standing_findings_unless_told() -> None:
    from autopilot_codex.styles.autopilot.findings import standing_lines

    ledger = step(Ledger(), *(raised(f"finding {n}") for n in range(25))).ledger
    assert len(standing_lines(ledger, "T1")[0]) == 20
    assert len(standing_lines(ledger, "T1", limit=3)[0]) == 3
