"""The autopilot reducer and the manager's price records at their edges, pinned where the
mutation audit found changes that no test noticed."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.config import Config
from autopilot_codex.contract import PREFIX
from autopilot_codex.manager import Outcome
from autopilot_codex.manager.pricing import Price, Usage
from autopilot_codex.manager.schemas import Review, Verdict
from autopilot_codex.state import ReviewRecord
from autopilot_codex.styles.autopilot import reducer
from autopilot_codex.styles.autopilot.record import evolve, of
from autopilot_codex.styles.context import Limits
from tests.unit.test_reducer import LIMITS, NOW, make_state, review, verdict


def _started(session_id: str | None) -> str | None:
    state = make_state()
    assert state.plan is not None
    started = reducer.start(
        goal="g",
        plan=state.plan,
        base_sha="b",
        worktree="/w",
        config=Config(),
        cost_usd=0.01,
        session_id=session_id,
        host="claude",
        generation=0,
    )
    return started.session_id


def test_a_loop_started_in_a_session_belongs_to_it_and_an_empty_id_to_nobody() -> None:
    assert _started("sess-1") == "sess-1"
    assert _started("") is None


def test_a_failed_background_review_says_why_or_that_nothing_came() -> None:
    failed: Outcome[Review] = Outcome(None, cost_usd=0.02, error="timeout after 60s")
    _, decision = reducer.apply_background_review(make_state(), failed, "h", now="t")
    assert decision.message == "timeout after 60s"
    silent: Outcome[Review] = Outcome(None, cost_usd=0.02)
    _, decision = reducer.apply_background_review(make_state(), silent, "h", now="t")
    assert decision.message == "no answer"


@pytest.mark.parametrize("record", [Price(1.0, 0.1, 2.0), Usage(1, 2, 3)])
def test_a_price_and_a_usage_are_values_not_records_to_edit(record: object) -> None:
    field = dataclasses.fields(record)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, field, 0)


def test_a_missing_verdict_pauses_saying_why_or_that_nothing_came() -> None:
    for error, said in (("quota exceeded", "quota exceeded"), (None, "no answer")):
        failed: Outcome[Verdict] = Outcome(None, cost_usd=0.01, error=error)
        state, _ = reducer.apply_verdict(make_state(), failed, "h", Limits(), now="t")
        assert state.status == "paused" and state.stop_reason == f"manager unavailable: {said}"


def test_an_abort_without_a_reason_says_the_manager_aborted() -> None:
    value = Verdict(
        decision="abort", reason="", current_task_done=False, instructions="", findings=[]
    )
    state, _ = reducer.apply_verdict(make_state(), Outcome(value), "h", Limits(), now="t")
    assert (state.status, state.stop_reason) == ("aborted", "manager aborted")


def test_an_overruled_done_says_the_manager_would_end_the_loop() -> None:
    done = Verdict(
        decision="done", reason="r", current_task_done=True, instructions="", findings=[]
    )
    more = Verdict(
        decision="continue", reason="r", current_task_done=True, instructions="", findings=[]
    )
    assert "would end the loop as done" in reducer.overrule_reason(make_state(), done, "red")
    assert "would accept the current task" in reducer.overrule_reason(make_state(), more, "red")


def test_usage_adds_up_kind_by_kind() -> None:
    assert Usage() == Usage(0, 0, 0)
    total = Usage(10, 4, 3) + Usage(1, 2, 5)
    assert total == Usage(11, 6, 8) and total.total == 19


def test_a_started_loop_begins_at_the_plan_s_first_task() -> None:
    state = make_state()
    assert state.plan is not None
    started = reducer.start(
        goal="g", plan=state.plan, base_sha="b", worktree="/w", config=Config(),
        cost_usd=0.0, session_id=None, host="claude", generation=0,
    )  # fmt: skip
    assert of(started).current_task == "T1"


def test_a_wordless_done_says_the_goal_was_achieved() -> None:
    value = Verdict(
        decision="done", reason="", current_task_done=True, instructions="", findings=[]
    )
    state, _ = reducer.apply_verdict(make_state(), Outcome(value), "h", Limits(), now="t")
    assert (state.status, state.stop_reason) == ("done", "goal achieved")


def test_an_overrule_notes_which_claim_the_checks_overruled() -> None:
    _, done = reducer.apply_verdict(
        make_state(), verdict("done"), "h1", LIMITS, now=NOW, checks_red="red"
    )
    _, moved = reducer.apply_verdict(
        make_state(), verdict("continue", done=True), "h1", LIMITS, now=NOW, checks_red="red"
    )
    assert done.note == "the checks overrule the manager's done"
    assert moved.note == "the checks overrule the manager's task advance"


def test_a_reject_with_nothing_to_restore_keeps_the_dropped_files_note() -> None:
    _, decision = reducer.apply_review(
        make_state(), review("reject", ["elsewhere.py"]), "h1", now=NOW, limits=LIMITS,
        changed_files=["a.py"],
    )  # fmt: skip
    assert decision.note == (
        "revert_files dropped (not changed by this task): elsewhere.py; "
        "a reject with nothing to restore is a fix"
    )


def _fix_record(diff: str = "d1") -> ReviewRecord:
    return ReviewRecord(diff_hash=diff, decision="fix", summary="s", reason="fix it", at=NOW)


def test_a_waiting_fix_at_the_stop_is_the_answer_and_counted_as_the_stop_s_turn() -> None:
    waiting = evolve(make_state(), pending_review=_fix_record())
    delivered, replayed = reducer.at_stop(waiting, _fix_record(), "h1")
    assert replayed is None and delivered is not None
    state, decision = delivered
    assert decision.event == "review.fix.delivered" and decision.reason == "fix it"
    assert of(state).pending_review is None and state.idle_stop_blocks == 1


def test_a_cached_review_at_the_stop_is_replayed_not_yet_counted() -> None:
    # The finding ledger weighs the replay first, then counts the Stop's turn: once.
    delivered, replayed = reducer.at_stop(make_state(), _fix_record(), "h1")
    assert delivered is None and replayed is not None
    state, decision = replayed
    assert decision.event == "review.cached" and decision.reason == "fix it"
    assert state.idle_stop_blocks == 0 and of(state).no_progress_streak == 0


def test_a_stop_with_nothing_waiting_nor_cached_has_no_review_to_give() -> None:
    assert reducer.at_stop(make_state(), None, "h1") == (None, None)


def test_a_fix_handed_over_outside_a_stop_is_no_turn() -> None:
    waiting = evolve(make_state(), pending_review=_fix_record())
    handed = reducer.take_pending(waiting, at_stop=False)
    assert handed is not None
    state, decision = handed
    assert decision.blocks and state.idle_stop_blocks == 0
    approved = ReviewRecord(diff_hash="d1", decision="approve", summary="s", at=NOW)
    state, decision = reducer.replay_cached(make_state(), approved, at_stop=True)
    assert not decision.blocks and state.idle_stop_blocks == 0


@pytest.mark.parametrize(
    ("decision", "said"),
    [
        ("done", "3 verdicts without a new commit, the last a done the checks overruled"),
        ("continue", "3 continue verdicts without a new commit"),
    ],
)
def test_a_loop_without_commits_ends_naming_the_verdicts_it_had(decision: str, said: str) -> None:
    state = make_state(no_progress_streak=2, last_verdict_head="h1", idle_stop_blocks=0)
    state, ended = reducer.apply_verdict(
        state, verdict(decision), "h1", LIMITS, now=NOW, checks_red="red"
    )
    assert ended.event == "verdict.no_progress" and state.stop_reason == said


def test_an_overrule_or_a_continue_says_where_the_loop_is_unless_told() -> None:
    from autopilot_codex.styles.autopilot.caps import spend

    state = make_state()
    done = Verdict(
        decision="done", reason="r", current_task_done=True, instructions="", findings=[]
    )
    overruled = reducer.overrule_reason(state, done, "red")
    assert f"would end the loop as done {spend(state)}, but" in overruled
    assert "at T9" in reducer.overrule_reason(state, done, "red", "at T9")
    said = reducer.continue_reason(state, done, "")
    assert said.startswith(f"{PREFIX} Manager verdict: continue {spend(state)}. r")
    assert "continue at T9. r" in reducer.continue_reason(state, done, "", "at T9")
