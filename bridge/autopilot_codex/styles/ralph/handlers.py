"""The ralph style's hooks: Stop feeds the prompt back until the promise or a cap; tool runs
and compactions are recorded so the stall and compaction guards can tell work from churn.

Everything runs under the store's lock and nothing waits on a network, so a `cancel` is
never raced: it takes the same lock, and a hook that comes after it finds the loop off.
"""

from __future__ import annotations

from collections.abc import Callable

from ... import guards, meters
from ...closing import closing
from ...contract import PREFIX
from ...hookio import ALLOW, Answer
from ...hosts import hostfiles
from ...output import terminal_command
from ...seatbelt import with_seatbelt
from ...spend import of_state
from ...state import State, Status
from ...store import Store
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
        on_tool(ctx)
    elif event == "PreCompact":
        on_pre_compact(ctx)
    elif event == "SessionStart":
        return hostfiles.session_start(ctx.store, ctx.payload.source) or on_session_start(ctx)
    return ALLOW


def owned(ctx: HookContext) -> State | None:
    """The running ralph loop when this hook's session owns it, or None to do nothing.

    A hook without a session id owns nothing: a loop must never bleed into another session;
    only a prompt the user typed claims an unowned one (`guards.claim`).
    """
    state = ctx.store.load(with_plan=False)
    if state is None or state.status != "running" or not isinstance(state.own, RalphRecord):
        return None
    return state if guards.owns(state, ctx.payload.session_id) else None


def on_stop(ctx: HookContext) -> Answer:
    payload = ctx.payload
    with ctx.store.locked():
        state = owned(ctx)
        if state is None:
            return ALLOW
        ralph = state.own
        assert isinstance(ralph, RalphRecord)  # `owned` holds only a ralph loop
        state = ctx.charged(state)
        state = state.evolve(stop_events=state.stop_events + 1)
        if state.compaction_pending:
            # The host is making room, not ending a turn: blocking here is how peers' loops
            # spun forever on a full context. The chain of blocks starts afresh after it.
            own = ralph.evolve(tools_at_block=state.tool_events)
            state = state.evolve(compaction_pending=False, idle_stop_blocks=0, own=own)
            _record(ctx.store, "stop.after_compaction", state, "allow")
            ctx.store.save(state)
            return ALLOW
        if payload.background:
            # Paused until its background work wakes it: no promise read, no iteration.
            from ..waiting import line

            _record(ctx.store, "stop.background", state, "allow")
            ctx.store.save(state)
            return Answer(message=line(payload.background, "the prompt comes back"))
        state, checks_red = _evidence(ctx, state, ralph, payload.last_assistant_message)
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
            return capped_end(ctx.store, state, *capped, now)
        if said.block:
            # The ledger's line first: the state's save then seals it in the one witness write.
            _record(ctx.store, "ralph.continue", state, "block")
            ctx.store.save(state)
            banner = f"{said.message} · {of_state(state).total_text()} spent"
            return Answer(block=said.block, message=with_seatbelt(banner, state.wall))
        end(ctx.store, state, decision.why, said.message, now)
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


def capped_end(store: Store, state: State, status: Status, reason: str, now: float) -> Answer:
    """A cap (budget, tokens, time) ends the loop, the meter named in its typed status."""
    why = CAP_WHY.get(status, "deadline")
    store.save_result(reducer.result_record(state, why, now))
    store.save(state.evolve(status=status, stop_reason=reason))
    _record(store, f"ralph.{status}", state, "allow")
    message = (
        f"{PREFIX} ralph {status}: {reason}. The safety rails stay on until the user runs "
        f"{terminal_command('cancel')}."
    )
    return Answer(message=closing(message, of_state(state)))


def _evidence(
    ctx: HookContext, state: State, ralph: RalphRecord, message: str
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
        ctx.store.append_event("checks.overrule", decision="block", iteration=state.iteration)
    return state, red


def end(store: Store, state: State, why: str, reason: str, now: float) -> State:
    """Leave `running` (`why`: the reducer's ending, or "cancelled"): the result file first,
    then the state, whose save removes the marker (a crash in between leaves the loop on with
    its result written, never off without one)."""
    store.save_result(reducer.result_record(state, why, now))
    status: Status = "stopped" if why == "cancelled" else END_STATUS[why]
    # The reason as `status` and the report tell it, without the hooks' message prefix.
    kept = reason.removeprefix(f"{PREFIX} ")
    kind = reducer.KIND_OF_WHY.get(why, why)
    saved = store.save(state.evolve(status=status, stop_reason=kept))
    _record(store, f"ralph.{kind}", state, "allow")
    return saved


def on_tool(ctx: HookContext) -> None:
    """A tool ran (or failed: a red test run is work too): the worker is not idle."""
    with ctx.store.locked():
        state = owned(ctx)
        if state is not None:
            ctx.store.save(guards.on_tool(ctx.charged(state)))


def on_pre_compact(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = owned(ctx)
        if state is None:
            return
        ctx.store.save(guards.on_compact(state))
        ctx.store.append_event(
            "compact", trigger=ctx.payload.trigger, session=ctx.payload.session_id
        )


def on_session_start(ctx: HookContext) -> Answer:
    """After a compaction or resume the prompt may be gone from the context: put it back."""
    if ctx.payload.source not in REINJECT_SOURCES:
        return ALLOW
    with ctx.store.locked():
        state = owned(ctx)
        if state is None:
            return ALLOW
        ctx.store.save(state)
        ctx.store.append_event(
            "session.context", source=ctx.payload.source, session=ctx.payload.session_id
        )
    return Answer(
        context=f"{PREFIX} A ralph loop is running in this worktree; its prompt, again:\n"
        + reducer.continue_reason(state)
    )


def _record(store: Store, event: str, state: State, decision: str) -> None:
    store.append_event(
        event,
        decision=decision,
        iteration=state.iteration,
        max_iterations=state.max_iterations,
        session=state.session_id,
    )


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
