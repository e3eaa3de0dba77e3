"""A consultation of the manager outside the one slot, shared by `ask` and the question tools
(`questions`): prepared (cap, budget, worst case reserved) under the lock, made without it,
then settled (charged, recorded) against the same loop, or abandoned (worst case charged).

The lock is never held during the manager call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ... import guards
from ...config import Config
from ...errors import BridgeError
from ...spend import usd
from ...state import State
from ...store import Store
from . import caps, inflight
from .effects import loop_diff
from .record import evolve, of, position_of, task_of

if TYPE_CHECKING:
    from ...manager import Outcome
    from ...manager.prompts import Prompt


@dataclass(frozen=True)
class Asked:
    """A consultation prepared (and its slot taken) under the lock, to be made without it."""

    generation: int
    model: str
    task_id: str | None
    number: int
    prompt: Prompt
    # The reservation of this call's worst case, released when it is settled.
    token: str = ""


def max_consultations(config: Config) -> int:
    # Read defensively until the setting is a field of Config.
    return config.max_consultations_per_task


def consultations_of_task(state: State) -> int:
    """Consultations of the current task; a task the loop moved to starts from zero."""
    own = of(state)
    return own.consultations if own.consultations_task == own.current_task else 0


def refusal(state: State | None, session_id: str | None, limit: int) -> str | None:
    """Why this consultation is not made, or None. Pure, so every reason is a table test."""
    if state is None:
        return "no loop in this worktree; ask works only while a loop runs"
    if state.status != "running":
        return f"the loop is {state.status}, not running; ask works only while a loop runs"
    # The host's shell cannot always learn its session id (Claude Code keeps it from the Bash
    # tool), so a caller that names none is taken for the implementer of this worktree; one
    # that names another session is refused.
    if state.owner == "session" and session_id and state.session_id not in (None, session_id):
        return "the loop here belongs to another session"
    used = consultations_of_task(state)
    if used >= limit:
        return (
            f"{used} of {limit} consultations for task {of(state).current_task} are used; settle it "
            "yourself, or commit and end your turn with the question"
        )
    return None


def prepare(store: Store, config: Config, question: str, session_id: str | None) -> Asked:
    from ...manager.ask_prompt import ask_prompt
    from ...manager.select import worst_case_usd

    with store.locked():
        state = store.load()
        why = refusal(state, session_id, max_consultations(config))
        if why is not None:
            raise BridgeError(f"not asked: {why}")
        assert state is not None
        now = inflight.clock()
        state, gone = inflight.reclaim_reservations(state, now)
        for held in gone:
            store.append_event(
                "ask.reclaimed", pid=held.pid, charged_usd=round(held.usd, 6), session=session_id
            )
        diff = loop_diff(store, of(state).task_base_sha)
        prompt = ask_prompt(
            goal=state.goal,
            plan=state.plan,
            task=task_of(state),
            position=position_of(state),
            completed=of(state).completed_tasks,
            question=question,
            diff=diff.text,
            cap=config.prompt_chars,
        )
        estimate = worst_case_usd(
            config, of(state).model, prompt.instructions + prompt.text, config.max_output_tokens
        )
        # The shared guard decides; its "stop the loop" half is dropped: a refused question
        # leaves the loop running.
        blocked = caps.budget_guard(state, estimate, "ask.budget", now=now)
        if blocked is not None:
            if gone:
                store.save(state)  # the reclaimed worst cases stay charged
            reason = blocked[1].reason or blocked[0].stop_reason or "budget used up"
            store.append_event(
                "ask.refused",
                decision="refused",
                reason=reason,
                estimate_usd=round(estimate, 6),
                session=session_id,
            )
            raise BridgeError(f"not asked: {reason}")
        number = consultations_of_task(state) + 1
        token = inflight.new_token()
        # The slot and the worst case are taken before the call, so parallel questions can
        # pass neither the cap nor the budget.
        state = inflight.reserve_call(
            state, estimate, pid=os.getpid(), token=token, now=now, timeout_s=config.timeout_s
        )
        store.save(
            evolve(
                state,
                consultations=number,
                consultations_task=of(state).current_task,
                consultations_total=of(state).consultations_total + 1,
            )
        )
    return Asked(state.generation, of(state).model, of(state).current_task, number, prompt, token)


def abandon(store: Store, asked: Asked, session_id: str | None) -> None:
    with store.locked():
        state = store.load(with_plan=False)
        if state is None:
            return
        state, mine = inflight.release_call(state, asked.token)
        if mine is None:
            return  # reclaimed already, and charged then
        store.save(guards.charge(state, mine.usd))
        store.append_event(
            "ask",
            decision="interrupted",
            task=asked.task_id,
            charged_usd=round(mine.usd, 6),
            session=session_id,
        )


def settle(store: Store, asked: Asked, outcome: Outcome[Any], session_id: str | None) -> State:
    """Charge what the call cost (also when it failed: it was billed), record it, and raise
    when there is no answer to give. The loop's status is never changed here."""
    ledger: dict[str, object] = {
        "task": asked.task_id,
        "consultation": asked.number,
        "tokens_in": outcome.usage.input_tokens,
        "tokens_out": outcome.usage.output_tokens,
        "cost_usd": round(outcome.cost_usd, 6),
        "error": outcome.error,
        "session": session_id,
    }
    with store.locked():
        state = store.load(with_plan=False)
        if state is None:
            store.append_event("ask", decision="orphaned", **ledger)
            raise BridgeError("no answer: the loop was removed while the manager answered")
        state, mine = inflight.release_call(state, asked.token)
        # A reservation reclaimed meanwhile (the call overran its deadline) was charged its
        # worst case then, which covers what the call cost; a loop planned anew meanwhile
        # never held it, and is charged what the call cost, as before reservations.
        reclaimed = mine is None and state.generation == asked.generation
        cost = 0.0 if reclaimed else outcome.cost_usd
        state = store.save(guards.charge(state, cost))
        moot = state.generation != asked.generation or state.status != "running"
        decision = "discarded" if moot else ("answered" if outcome.ok else "failed")
        store.append_event(
            "ask", decision=decision, budget_used_usd=round(state.budget_used_usd, 6), **ledger
        )
    if moot:
        raise BridgeError(
            f"no answer: the loop was {state.status if state.status != 'running' else 're-planned'} "
            f"while the manager answered (spent {usd(outcome.cost_usd)})"
        )
    if not outcome.ok:
        raise BridgeError(
            f"no answer: {outcome.error or 'the manager gave none'} (spent {usd(outcome.cost_usd)}); "
            "the loop goes on, settle it yourself or end your turn with the question"
        )
    return state
