"""The autopilot style's hooks: which event goes where, and the small ones (a tool ran, a
compaction, a session start). The Stop, the one that judges, reads top to bottom in `stop`.
"""

from __future__ import annotations

from dataclasses import replace

from ... import contract, gitrepo, guards, meters
from ...guards import Decision
from ...hookio import ALLOW, Answer
from ...hosts import hostfiles
from ...registry import ByEvent
from ...state import State
from ..context import HookContext
from . import caps, inflight, reducer
from .effects import owned, record
from .record import evolve, of, position_of, review_mode, task_of
from .stop import answer_stop


def rest(ctx: HookContext) -> Answer:
    """The hooks but the Stop, which `handle` hands to `stop` directly."""
    event = ctx.payload.event
    if event == "PostToolUse":
        return on_post_tool(ctx).answer
    if event == "PostToolUseFailure":
        # A failed tool is work too (a red test run): it resets the stall count, no review.
        on_tool_failure(ctx)
        return ALLOW
    if event == "PreCompact":
        on_pre_compact(ctx)
        return ALLOW
    if event == "SessionStart":
        held = hostfiles.session_start(ctx.store, ctx.payload.source)
        return held or Answer(context=on_session_start(ctx))
    if event == "PreToolUse":
        # The rails let a question to the user through: the manager answers it (`questions`).
        from .questions import answer

        return answer(ctx)
    return ALLOW


# The style's hooks: the Stop in one hop to the module that judges it, the rest here.
handle: ByEvent[HookContext, Answer] = ByEvent({"Stop": answer_stop}, rest)


# -- events ---------------------------------------------------------------------------------


def on_session_start(ctx: HookContext) -> str:
    """After a compaction or resume, put the current task back in front of the implementer."""
    if ctx.payload.source not in ("compact", "resume", "clear"):
        return ""
    with ctx.store.locked():
        state = ctx.store.load()
        if (
            state is None
            or state.status != "running"
            or not guards.owns(state, ctx.payload.session_id)
        ):
            return ""
        ctx.store.append_event(
            "session.context", source=ctx.payload.source, session=ctx.payload.session_id
        )
    task = task_of(state)
    if task is None:
        return ""
    return (
        f"{contract.PREFIX} An autopilot loop is running (goal: {contract.clip(state.goal, 300)}). "
        "Your current task:\n" + contract.task_contract(task, position_of(state))
    )


def on_pre_compact(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = owned(ctx, ctx.store)
        if state is None:
            return
        ctx.store.save(
            guards.on_compact(guards.claim(state, ctx.payload.session_id, ctx.host.name))
        )
        ctx.store.append_event(
            "compact", trigger=ctx.payload.trigger, session=ctx.payload.session_id
        )


def on_tool_failure(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = owned(ctx, ctx.store)
        if state is not None:
            ctx.store.save(
                guards.on_tool(guards.claim(state, ctx.payload.session_id, ctx.host.name))
            )


def on_post_tool(ctx: HookContext) -> Decision:
    """Answer at once: hand over a background review's fix or reject if one is waiting, and
    start a review of the diff in the background if none is in flight."""
    payload = ctx.payload
    with ctx.store.locked():
        state = owned(ctx, ctx.store)
        if state is None:
            return guards.allow("ignored")
        state = guards.on_tool(guards.claim(state, payload.session_id, ctx.host.name))
        state = ctx.charged(state)
        capped = meters.over(state, inflight.clock(), state.budget_usd)
        if capped is not None:
            # A turn that reaches a cap (the budget, the tokens, the time) ends here, not at
            # its Stop: a turn that never ends would otherwise go on past it.
            status, reason = capped
            state, decision = caps.end(state, status, reason, f"tool.{status}")
            record(ctx, state, decision, None)
            ctx.store.save(state)
            halt = f"{contract.PREFIX} {status}: {reason}"
            return replace(decision, answer=replace(decision.answer, halt=halt))
        decision = guards.allow("tool")
        delivered = reducer.take_pending(state, at_stop=False)
        if delivered is not None:
            state, decision = delivered
            record(ctx, state, decision, None)
        mode = review_mode(state)
        wants = (mode == "edit" and payload.tool_name in ctx.host.edit_tools) or (
            mode == "commit" and payload.tool_name in ctx.host.shell_tools
        )
        if wants and mode == "commit":
            head = gitrepo.head_sha(ctx.store.worktree)
            wants = head not in (of(state).last_review_head, of(state).task_base_sha)
            state = evolve(state, last_review_head=head) if wants else state
        if wants:
            state = _start_review(ctx, state)
        ctx.store.save(state)
    return decision


def _start_review(ctx: HookContext, state: State) -> State:
    """Take the loop's one in-flight slot and start the worker; a busy slot means the worker
    already running will look at the diff again when its review comes back."""
    from . import background

    token = inflight.new_token()
    now = inflight.clock()
    state = inflight.reclaimed(ctx.store, ctx.payload.session_id, state, now)
    claimed = inflight.take(
        state, "review", pid=0, token=token, now=now, timeout_s=ctx.config.timeout_s
    )
    if claimed is None or claimed.inflight is None:
        return state
    try:
        pid = background.spawn(
            ctx.store, token=token, host=ctx.host.name, session=ctx.payload.session_id or ""
        )
    except OSError as exc:
        ctx.store.append_event(
            "review.spawn_failed", error=str(exc), session=ctx.payload.session_id
        )
        return state
    # Saved by the caller before the lock is released: the worker waits for the lock first.
    return claimed.evolve(inflight=claimed.inflight.evolve(pid=pid))
