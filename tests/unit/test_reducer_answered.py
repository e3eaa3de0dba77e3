"""The last hold of a Stop that called the manager, decided in one pure call
(`reducer.answered`): its whole decision matrix, and the overrule of a done that hands on a
HEAD the manager never saw (`apply_verdict`'s `unseen`)."""

from __future__ import annotations

import os
from typing import Any

from autopilot_codex.guards import Step
from autopilot_codex.manager import Outcome
from autopilot_codex.state import State
from autopilot_codex.styles.autopilot import inflight, reducer
from autopilot_codex.styles.autopilot.idle import CONTINUE, NOTHING_LEFT
from tests.unit.test_reducer import LIMITS, NOW, make_state, verdict

TOKEN = "tok"


def asked(**update: Any) -> State:
    """A running loop whose Stop holds the slot, as its call was prepared."""
    state = inflight.take(
        make_state(**update), "stop", pid=os.getpid(), token=TOKEN, now=100.0, timeout_s=60
    )
    assert state is not None
    return state


def applying(outcome: Outcome[Any]) -> Any:
    def reduce(state: State) -> Step:
        return reducer.apply_verdict(state, outcome, "head", LIMITS, now=NOW)

    return reduce


def answered(state: State, was: State, outcome: Outcome[Any], *, breach: bool = False) -> Any:
    return reducer.answered(
        state, was, outcome, applying(outcome), token=TOKEN, event="verdict", breach=breach,
        now=200.0,
    )  # fmt: skip


def test_an_answer_to_a_loop_replanned_meanwhile_is_charged_and_discarded() -> None:
    was = asked()
    now = was.evolve(generation=was.generation + 1)
    [(state, decision, outcome)] = answered(now, was, verdict("done"))
    assert decision.event == "verdict.discarded" and not decision.blocks
    assert state.status == "running" and state.inflight is None
    assert state.budget_used_usd == was.budget_used_usd + 0.25 and outcome.cost_usd == 0.25


def test_an_answer_to_a_loop_stopped_meanwhile_is_charged_and_discarded() -> None:
    was = asked()
    [(state, decision, _)] = answered(was.evolve(status="paused"), was, verdict("continue"))
    assert decision.event == "verdict.discarded"
    assert state.status == "paused" and state.budget_used_usd == was.budget_used_usd + 0.25


def test_an_answer_to_the_loop_it_was_asked_about_is_applied_and_the_slot_given_back() -> None:
    was = asked()
    [(state, decision, outcome)] = answered(was, was, verdict("continue"))
    assert decision.event == CONTINUE and decision.blocks and outcome.value is not None
    assert state.inflight is None and state.status == "running"


def test_a_continue_on_a_second_breach_of_the_contract_pauses() -> None:
    was = asked()
    [(state, decision, _)] = answered(was, was, verdict("continue"), breach=True)
    assert decision.event == NOTHING_LEFT and state.status == "paused"


def test_a_cap_reached_while_the_manager_answered_ends_a_continue() -> None:
    was = asked(budget_usd=1.0, budget_used_usd=0.9)
    decided = answered(was, was, verdict("continue"))
    assert [d.event for _, d, _ in decided] == [CONTINUE, "verdict.budget"]
    assert decided[-1][0].status == "stopped_budget" and decided[-1][2] is None


def test_a_done_over_the_cap_ends_done_with_no_second_line() -> None:
    was = asked(budget_usd=1.0, budget_used_usd=0.9)
    [(state, decision, _)] = answered(was, was, verdict("done"))
    assert decision.event == "verdict.done" and state.status == "done"


def test_a_head_the_manager_never_saw_overrules_a_done_and_a_task_advance() -> None:
    unseen = "HEAD holds hidden.txt, which the reviewed tree does not"
    for claim in (verdict("done"), verdict("continue", done=True)):
        state, decision = reducer.apply_verdict(
            make_state(), claim, "head", LIMITS, now=NOW, unseen=unseen
        )
        assert decision.event == "checks.overrule" and state.status == "running"
        assert unseen in decision.reason
    state, decision = reducer.apply_verdict(
        make_state(), verdict("continue"), "head", LIMITS, now=NOW, unseen=unseen
    )
    assert decision.event == CONTINUE and unseen not in decision.reason
