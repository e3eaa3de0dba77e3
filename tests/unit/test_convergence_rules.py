"""The finding ledger and the convergence rules of reviews, as table tests (issue 23): a
finding keeps its id, is superseded or delivered, is disputed after two verbatim deliveries;
a task's findings are capped; reviews that change nothing pause the loop."""

from __future__ import annotations

from typing import Any

from autopilot_codex.manager import Outcome
from autopilot_codex.manager.schemas import Finding, Review
from autopilot_codex.state import State
from autopilot_codex.styles.autopilot import reducer
from autopilot_codex.styles.autopilot.convergence import (
    PASSED_DISPUTED,
    Rules,
    count_turn,
    judge,
)
from autopilot_codex.styles.autopilot.findings import Ledger, Raised, listing, merge
from autopilot_codex.styles.autopilot.record import of
from autopilot_codex.styles.context import Limits
from tests.unit.test_reducer import NOW, make_state

RULES = Rules(max_verbatim=2, max_findings_per_task=4, not_converging=3)


def raised(title: str, fid: str | None = None, file: str = "a.py") -> Raised:
    return Raised("high", file, title, f"fix {title}", id=fid)


def found(title: str, fid: str | None = None, file: str = "a.py") -> Finding:
    return Finding(
        severity="high", file=file, line_start=1, line_end=1, title=title,
        recommendation=f"fix {title}", id=fid,
    )  # fmt: skip


def step(ledger: Ledger, *items: Raised, closed: tuple[str, ...] = (), key: str = "d") -> Any:
    return merge(
        ledger, task="T1", raised=list(items), closed_ids=closed, diff_key=key, now=NOW,
        max_verbatim=2,
    )  # fmt: skip


def test_a_new_finding_gets_the_next_id_and_its_diff_state() -> None:
    m = step(Ledger(), raised("one"), raised("two"), key="d1")
    assert [(e.id, e.status, e.raised_on, e.task) for e in m.ledger.entries] == [
        ("F1", "open", "d1", "T1"),
        ("F2", "open", "d1", "T1"),
    ]
    assert m.ledger.reviews == 1 and m.ledger.idle_reviews == 0


def test_a_restated_finding_keeps_its_id_by_id_or_by_its_words() -> None:
    first = step(Ledger(), raised("one")).ledger
    by_id = step(first, raised("one, in new words", "F1")).ledger
    assert [(e.id, e.title, e.verbatim) for e in by_id.entries] == [("F1", "one, in new words", 1)]
    by_words = step(first, raised("one")).ledger
    assert [(e.id, e.verbatim) for e in by_words.entries] == [("F1", 2)]


def test_an_unknown_id_is_a_new_finding() -> None:
    m = step(step(Ledger(), raised("one")).ledger, raised("other", "F9"))
    assert [(e.id, e.status) for e in m.ledger.entries] == [("F1", "fixed"), ("F2", "open")]


def test_a_finding_not_raised_again_on_a_newer_diff_is_superseded_never_lost() -> None:
    first = step(Ledger(), raised("one"), raised("two")).ledger
    m = step(first, raised("two"), key="d2")
    assert [(e.id, e.status) for e in m.ledger.entries] == [("F1", "fixed"), ("F2", "open")]
    assert [e.id for e in m.closed] == ["F1"]


def test_closed_by_the_manager_wins_over_kept() -> None:
    first = step(Ledger(), raised("one")).ledger
    m = step(first, raised("one", "F1"), closed=("F1",))
    assert m.ledger.entries[0].status == "fixed" and m.said == []


def test_the_third_verbatim_saying_disputes_it() -> None:
    ledger = Ledger()
    for _ in range(2):
        m = step(ledger, raised("same"))
        ledger = m.ledger
        assert m.disputed == [] and ledger.entries[0].status == "open"
    m = step(ledger, raised("same"))
    assert [(e.id, e.status, e.verbatim) for e in m.disputed] == [("F1", "disputed", 3)]
    # Restated in other words it is still disputed, and counts from one again.
    again = step(m.ledger, raised("same, differently", "F1")).ledger
    assert (again.entries[0].status, again.entries[0].verbatim) == ("disputed", 1)


def test_reviews_that_only_restate_count_as_idle_and_a_change_resets() -> None:
    ledger = step(Ledger(), raised("one")).ledger
    ledger = step(ledger, raised("one")).ledger
    ledger = step(ledger, raised("one")).ledger
    assert ledger.idle_reviews == 2
    assert step(ledger, raised("one"), raised("new")).ledger.idle_reviews == 0


def test_the_listing_shows_the_age_and_the_verbatim_count() -> None:
    ledger = step(
        step(step(Ledger(), raised("one")).ledger, raised("one")).ledger, raised("one")
    ).ledger
    assert listing(ledger) == [
        "F1 [disputed, high, task T1, age 2 review(s), said 3x verbatim] one (a.py)"
    ]


def test_the_ledger_round_trips_through_json() -> None:
    ledger = step(Ledger(), raised("one"), raised("two")).ledger
    assert Ledger.from_json(ledger.to_json()) == ledger


# -- the rules, over the reducer's answer ----------------------------------------------------


def fix(*items: Finding, closed: list[str] | None = None) -> Review:
    return Review(
        decision="fix", summary="sum", findings=list(items), revert_files=[], closed=closed
    )


def reduced(state: State, review: Review, key: str = "d") -> tuple[State, Any]:
    return reducer.apply_review(state, Outcome(review, cost_usd=0.1), key, now=NOW, limits=Limits())


def judged(state: State, review: Review, ledger: Ledger, key: str = "d", files: Any = None) -> Any:
    s, decision = reduced(state, review, key)
    return judge(
        s, decision, review, ledger, diff_key=key, now=NOW, rules=RULES, changed_files=files
    )


def test_a_delivered_finding_names_its_id() -> None:
    state, decision, ledger = judged(make_state(), fix(found("one")), Ledger())
    assert decision.blocks and "(finding F1)" in decision.reason
    assert ledger.entries[0].deliveries == 1
    assert (kept := of(state).last_review) is not None and kept.reason == decision.reason


def test_at_most_two_verbatim_deliveries_then_the_dispute_notice_then_nothing() -> None:
    state, ledger = make_state(), Ledger()
    reasons = []
    for n in range(3):
        state, decision, ledger = judged(state, fix(found("same")), ledger, key=f"d{n}")
        reasons.append(decision.reason)
    assert ["fix same (finding F1)" in r for r in reasons] == [True, True, False]
    assert "F1 (same)" in reasons[2] and "marked disputed" in reasons[2]
    assert decision.event == "review.disputed" and decision.blocks
    state, decision, ledger = judged(state, fix(found("same", "F1")), ledger, key="d3")
    # Nothing left to deliver: no block, the Stop goes on to the verdict (unless idle: below).
    assert decision.event in (PASSED_DISPUTED, "review.not_converging")


def test_k_reviews_that_change_nothing_pause_as_not_converging() -> None:
    state, ledger = make_state(), Ledger()
    events = []
    for n in range(4):
        state, decision, ledger = judged(state, fix(found("same")), ledger, key=f"d{n}")
        events.append(decision.event)
    assert events[-1] == "review.not_converging"
    assert state.status == "paused" and state.stop_reason is not None
    assert state.stop_reason.startswith("reviews not converging: 3 reviews in a row")
    assert "F1 [disputed" in state.stop_reason
    assert not decision.blocks and "paused" in decision.message


def test_a_task_with_too_many_findings_pauses() -> None:
    items = [found(f"point {n}") for n in range(5)]
    state, decision, _ = judged(make_state(), fix(*items), Ledger())
    assert decision.event == "review.too_many_findings" and state.status == "paused"
    assert "more than 4" in (state.stop_reason or "")


def test_a_finding_outside_the_tasks_diff_is_advisory() -> None:
    review = fix(found("old code", file="legacy.py"), found("mine", file="a.py"))
    state, decision, ledger = judged(make_state(), review, Ledger(), files=["a.py"])
    assert decision.blocks and "mine" in decision.reason and "old code" not in decision.reason
    assert [(e.title, e.status) for e in ledger.entries] == [
        ("old code", "waived"),
        ("mine", "open"),
    ]
    only_old = fix(found("old code", file="legacy.py"))
    state, decision, _ = judged(make_state(), only_old, Ledger(), files=["a.py"])
    assert not decision.blocks and decision.event == PASSED_DISPUTED
    # Its cached replay passes too: the same diff does not block on advisory findings.
    assert (kept := of(state).last_review) is not None and kept.decision == "approve"


def test_an_approve_closes_the_tasks_open_findings() -> None:
    _, _, ledger = judged(make_state(), fix(found("one")), Ledger())
    approve = Review(decision="approve", summary="ok", findings=[], revert_files=[], closed=None)
    s, decision = reduced(make_state(), approve)
    _, _, after = judge(s, decision, approve, ledger, diff_key="d2", now=NOW, rules=RULES)
    assert [e.status for e in after.entries] == ["fixed"] and after.idle_reviews == 0


def test_a_review_block_at_a_stop_is_a_turn_for_every_guard() -> None:
    block = reduced(make_state(), fix(found("one")))[1]
    state = count_turn(make_state(), block, True, "base")
    assert (state.iteration, state.idle_stop_blocks, of(state).no_progress_streak) == (1, 1, 1)
    moved = count_turn(state, block, True, "newer")
    assert (moved.iteration, of(moved).no_progress_streak, of(moved).last_verdict_head) == (
        2,
        0,
        "newer",
    )
    # Not at a Stop (a tool's hook), or not a block: no turn.
    assert count_turn(make_state(), block, False, "base").iteration == 0


def test_the_rules_read_the_users_settings(tmp_path: Any) -> None:
    from autopilot_codex.config import load_config

    env = {"AUTOPILOT_CODEX_REVIEW_MAX_VERBATIM": "1", "AUTOPILOT_CODEX_REVIEW_NOT_CONVERGING": "x"}
    warnings: list[str] = []
    config = load_config(environ=env, home=tmp_path, warnings=warnings)
    assert Rules.of(config) == Rules(max_verbatim=1, max_findings_per_task=12, not_converging=3)
    assert any("AUTOPILOT_CODEX_REVIEW_NOT_CONVERGING" in w for w in warnings)


def test_a_reject_stands_even_when_its_findings_are_advisory() -> None:
    reject = Review(
        decision="reject", summary="wrong approach", findings=[found("x", file="legacy.py")],
        revert_files=["a.py"], closed=None,
    )  # fmt: skip
    state, decision = reducer.apply_review(
        make_state(), Outcome(reject, cost_usd=0.1), "d", now=NOW, limits=Limits(),
        changed_files=["a.py"],
    )  # fmt: skip
    _, after, _ = judge(
        state,
        decision,
        reject,
        Ledger(),
        diff_key="d",
        now=NOW,
        rules=RULES,
        changed_files=["a.py"],
    )
    assert after == decision and after.blocks and "git restore" in after.reason


def test_a_fix_without_findings_stands_as_said() -> None:
    words = fix()
    state, decision = reduced(make_state(), words)
    _, after, _ = judge(state, decision, words, Ledger(), diff_key="d", now=NOW, rules=RULES)
    assert after == decision and after.blocks


def test_a_replay_counts_as_a_verbatim_delivery_then_disputes() -> None:
    from autopilot_codex.styles.autopilot.convergence import replay

    state, decision, ledger = judged(make_state(), fix(found("same")), Ledger())
    state, again, ledger = replay(state, decision, ledger, RULES)
    assert again == decision and ledger.entries[0].verbatim == 2
    state, third, ledger = replay(state, decision, ledger, RULES)
    assert third.event == "review.disputed" and "marked disputed" in third.reason
    assert ledger.entries[0].status == "disputed"
    assert (kept := of(state).last_review) is not None and kept.decision == "approve"
    # A passing replay, or one without ledger ids, is left alone.
    plain = reduced(make_state(), fix())[1]
    assert replay(state, plain, ledger, RULES)[1] == plain


def test_a_new_generation_restarts_the_counts_and_keeps_the_findings() -> None:
    from autopilot_codex.styles.autopilot.findings import in_generation, raised_since_epoch

    ledger = step(step(Ledger(generation=1), raised("one")).ledger, raised("one")).ledger
    assert ledger.idle_reviews == 1 and raised_since_epoch(ledger, "T1") == 1
    resumed = in_generation(ledger, 2)
    assert (resumed.idle_reviews, resumed.epoch, resumed.entries) == (0, 2, ledger.entries)
    assert raised_since_epoch(resumed, "T1") == 0
    assert in_generation(resumed, 2) is resumed


def test_a_background_review_leaves_the_pause_to_the_stop() -> None:
    from autopilot_codex.styles.autopilot.convergence import stop_check

    state, ledger = make_state(), Ledger()
    for n in range(3):
        state, decision, ledger = judged(state, fix(found("same")), ledger, key=f"d{n}")
    s, d = reduced(state, fix(found("same")), "d3")
    quiet, answer, ledger = judge(
        s, d, fix(found("same")), ledger, diff_key="d3", now=NOW, rules=RULES, can_end=False
    )
    assert quiet.status == "running" and not answer.blocks and of(quiet).pending_review is None
    paused = stop_check(quiet, ledger, RULES)
    assert paused is not None and paused[0].status == "paused"
    assert paused[1].event == "review.not_converging"
