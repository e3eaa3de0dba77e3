"""The ralph style's hooks: Stop feeds the prompt back until the promise or a cap; tool runs
and compactions are recorded so the stall and compaction guards can tell work from churn.

Everything runs under the store's lock and nothing waits on a network, so a `cancel` is
never raced: it takes the same lock, and a hook that comes after it finds the loop off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ... import guards, meters
from ...closing import closing
from ...contract import PREFIX
from ...hookio import ALLOW, Answer
from ...hosts import hostfiles
from ...output import terminal_command
from ...seatbelt import with_seatbelt
from ...spend import of_state
from ...state import State, Status
from ...store import Held, Store, holding
from ..context import HookContext
from . import reducer
from .record import RalphRecord

# How a ralph loop is started, taken on again and ended.
STARTED_BY = "ralph <prompt>"
RESUMED_BY = "ralph"
ENDED_BY = "cancel"

# How the loop leaves `running` for each way the reducer ends it (its `Decision.why`).
END_STATUS: dict[str, Status] = {
    "promise": "done",
    "max_iterations": "stopped_iteration_limit",
    "stalled": "paused",
    "deadline": "stopped_duration",
}
# How the result names a cap's ending (`capped_end`): the time cap is the reducer's deadline.
CAP_WHY: dict[Status, reducer.Why] = {"stopped_budget": "budget", "stopped_tokens": "tokens"}
# The SessionStart sources after which the prompt is gone from the model's context.
REINJECT_SOURCES = ("compact", "resume", "clear")


def handle(ctx: HookContext) -> Answer:
    event = ctx.payload.event
    if event == "Stop":
        return on_stop(ctx)
    if event in ("PostToolUse", "PostToolUseFailure"):
        return on_tool(ctx)
    if event == "PreCompact":
        on_pre_compact(ctx)
    elif event == "SessionStart":
        return hostfiles.session_start(ctx.store, ctx.payload.source) or on_session_start(ctx)
    return ALLOW


def mine(ctx: HookContext, state: State | None) -> State | None:
    """`state` when it is a running ralph loop this hook's session owns, else None.

    A hook without a session id owns nothing: a loop must never bleed into another session;
    only a prompt the user typed claims an unowned one (`guards.claim`).
    """
    if state is None or state.status != "running" or not isinstance(state.own, RalphRecord):
        return None
    return state if guards.owns(state, ctx.payload.session_id) else None


def on_stop(ctx: HookContext) -> Answer:
    """One hold of the store: the loop loaded once as the lock is taken; what is decided
    here (the result, the ledger's line, the state) written as it is let go."""
    with holding(ctx) as held:
        return stopped(ctx, held)


def stopped(ctx: HookContext, held: Held) -> Answer:
    payload = ctx.payload
    state = mine(ctx, held.state)
    if state is None:
        return ALLOW
    ralph = state.own
    assert isinstance(ralph, RalphRecord)  # `mine` holds only a ralph loop
    state = ctx.charged(state)
    state = state.evolve(stop_events=state.stop_events + 1)
    if state.compaction_pending:
        # The host is making room, not ending a turn: blocking here is how peers' loops
        # spun forever on a full context. The chain of blocks starts afresh after it.
        own = ralph.evolve(tools_at_block=state.tool_events)
        state = state.evolve(compaction_pending=False, idle_stop_blocks=0, own=own)
        held.lines.append(_line("stop.after_compaction", state, "allow"))
        held.save = state
        return ALLOW
    if payload.background:
        # Paused until its background work wakes it: no promise read, no iteration.
        from ..waiting import line

        held.lines.append(_line("stop.background", state, "allow"))
        held.save = state
        return Answer(message=line(payload.background, "the prompt comes back"))
    state, checks_red = _evidence(ctx, held, state, ralph, payload.last_assistant_message)
    # The cap is read with the clock: the reducer moves no meter (only the iteration and
    # the stall count), so the cap it would find after it is this one.
    now, cap = meters.clocked(state, state.budget_usd or None)
    state, decision = reducer.on_stop(
        state,
        last_message=payload.last_assistant_message,
        stop_hook_active=payload.stop_hook_active,
        tool_ran_since_last_block=state.tool_events > ralph.tools_at_block,
        now=now,
        checks_red=checks_red,
    )
    # The reducer keeps the record as it was: only the tool count at this answer moves.
    state = state.evolve(own=ralph.evolve(tools_at_block=state.tool_events))
    said = decision.answer
    # The loop would go on: unless a cap says otherwise (a promise kept comes first).
    capped = cap if said.block else None
    if capped is not None:
        return capped_end(held, state, *capped, now)
    if said.block:
        # The ledger's line first: the state's save then seals it in the one witness write.
        held.lines.append(_line("ralph.continue", state, "block"))
        held.save = state
        banner = f"{said.message} · {of_state(state).total_text()} spent"
        return Answer(block=said.block, message=with_seatbelt(banner, state.wall))
    _ending(held, state, decision.why, said.message, now)
    if END_STATUS[decision.why] == "done":
        return Answer(message=closing(said.message, of_state(state)))
    # Fail closed (Store.save): only a clean ending takes the rails off.
    return Answer(
        message=closing(
            f"{said.message}. The safety rails stay on until the user runs "
            f"{terminal_command('cancel')}.",
            of_state(state),
        )
    )


def capped_end(held: Held, state: State, status: Status, reason: str, now: float) -> Answer:
    """A cap (budget, tokens, time) ends the loop, the meter named in its typed status."""
    why = CAP_WHY.get(status, "deadline")
    held.result = reducer.result_record(state, why, now)
    held.lines.append(_line(f"ralph.{status}", state, "allow"))
    held.save = state.evolve(status=status, stop_reason=reason)
    message = (
        f"{PREFIX} ralph {status}: {reason}. The safety rails stay on until the user runs "
        f"{terminal_command('cancel')}."
    )
    return Answer(message=closing(message, of_state(state)))


def _evidence(
    ctx: HookContext, held: Held, state: State, ralph: RalphRecord, message: str
) -> tuple[State, str]:
    """The user's checks, run only when a promise is made: they decide whether it is true."""
    promise = ralph.completion_promise
    if not state.checks or not promise or not reducer.promise_met(message, promise):
        return state, ""
    from ...checks.evidence import gather
    from ...checks.run import failure_reason

    state, results = gather(ctx.store, state, manager_calls=0, call_timeout_s=0.0)
    red = failure_reason(results)
    if red:
        fields: dict[str, Any] = {"decision": "block", "iteration": state.iteration}
        held.lines.append(("checks.overrule", fields))
    return state, red


def _ending(held: Held, state: State, why: str, reason: str, now: float) -> None:
    """Leave `running` (`why`: the reducer's ending, or "cancelled"): the result file first,
    then the state, whose save removes the marker (a crash in between leaves the loop on with
    its result written, never off without one)."""
    held.result = reducer.result_record(state, why, now)
    status: Status = "stopped" if why == "cancelled" else END_STATUS[why]
    # The reason as `status` and the report tell it, without the hooks' message prefix.
    kept = reason.removeprefix(f"{PREFIX} ")
    kind = reducer.KIND_OF_WHY.get(why, why)
    held.lines.append(_line(f"ralph.{kind}", state, "allow"))
    held.save = state.evolve(status=status, stop_reason=kept)


def end(store: Store, state: State, why: str, reason: str, now: float) -> State:
    """`_ending` written at once, under the caller's lock (`cancel`)."""
    held = Held(state)
    _ending(held, state, why, reason, now)
    assert held.result is not None and held.save is not None
    store.save_result(held.result)
    saved = store.save(held.save)
    for name, fields in held.lines:
        store.append_event(name, **fields)
    return saved


def on_tool(ctx: HookContext) -> Answer:
    """A tool ran (or failed: a red test run is work too): the worker is not idle. A turn
    that reaches a cap (the budget, the tokens, the time) ends here, not at its Stop: the
    loop ends and the host is told to end the turn."""
    with holding(ctx) as held:
        state = mine(ctx, held.state)
        if state is None:
            return ALLOW
        state = guards.on_tool(ctx.charged(state))
        held.save = state
        now = meters.clock()
        cap = meters.exceeded(meters.reading(state, now, state.budget_usd or None))
        if cap is None:
            return ALLOW
        status = meters.STATUS[cap[0]]
        ended = capped_end(held, state, status, cap[1], now)
        return replace(ended, halt=f"{PREFIX} ralph {status}: {cap[1]}")


def on_pre_compact(ctx: HookContext) -> None:
    with holding(ctx) as held:
        state = mine(ctx, held.state)
        if state is not None:
            fields = {"trigger": ctx.payload.trigger, "session": ctx.payload.session_id}
            held.lines.append(("compact", fields))
            held.save = guards.on_compact(state)


def on_session_start(ctx: HookContext) -> Answer:
    """After a compaction or resume the prompt may be gone from the context: put it back."""
    if ctx.payload.source not in REINJECT_SOURCES:
        return ALLOW
    with holding(ctx) as held:
        state = mine(ctx, held.state)
        if state is None:
            return ALLOW
        fields = {"source": ctx.payload.source, "session": ctx.payload.session_id}
        held.lines.append(("session.context", fields))
        held.save = state
    return Answer(
        context=f"{PREFIX} A ralph loop is running in this worktree; its prompt, again:\n"
        + reducer.continue_reason(state)
    )


def _line(event: str, state: State, decision: str) -> tuple[str, dict[str, Any]]:
    fields: dict[str, Any] = {
        "decision": decision,
        "iteration": state.iteration,
        "max_iterations": state.max_iterations,
        "session": state.session_id,
    }
    return event, fields


def status_text(state: State, store: Store, entry: Callable[[str], str]) -> str:
    from .view import status_text as text  # a view: not on the hook path

    return text(state, store)


def cancel(store: Store, state: State) -> str:
    """The user ends the loop now (`cancel`): its result is written, then its state."""
    end(store, state, "cancelled", "cancelled by the user", meters.clock())
    cap = str(state.max_iterations) if state.max_iterations else "unlimited"
    return (
        f"autopilot-codex: ralph loop cancelled at iteration {state.iteration}/{cap}; the next "
        f"Stop ends normally. Result in {store.result_path}."
    )
