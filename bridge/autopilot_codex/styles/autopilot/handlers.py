"""The autopilot style's hooks: lock, guard, ask the manager, reduce, answer.

The lock is never held during a manager call, so parallel hooks and `codex-stop` are never
kept waiting on the network; the answer is applied only if the loop is still the same one.
"""

from __future__ import annotations

import os
import time

from ... import contract, gitrepo, guards
from ...check_records import CheckResult
from ...guards import Decision
from ...hookio import ALLOW, Answer
from ...state import State
from ..context import HookContext
from . import findings_store, inflight, reducer
from .convergence import Rules
from .steps import (
    REVIEW_PASSED,
    checks_for,
    diff_key,
    finish,
    owned,
    prepare_review,
    prepare_verdict,
    record,
    resolve,
    review_mode,
)


def handle(ctx: HookContext) -> Answer:
    event = ctx.payload.event
    if event == "Stop":
        return answer_of(on_stop(ctx))
    if event == "PostToolUse":
        return answer_of(on_post_tool(ctx))
    if event == "PostToolUseFailure":
        # A failed tool is work too (a red test run): it resets the stall count, no review.
        on_tool_failure(ctx)
        return ALLOW
    if event == "PreCompact":
        on_pre_compact(ctx)
        return ALLOW
    if event == "SessionStart":
        return Answer(context=on_session_start(ctx))
    return ALLOW


def answer_of(decision: Decision) -> Answer:
    if decision.blocks:
        return Answer(block=decision.reason, message=decision.message)
    return Answer(context=decision.context, message=decision.message)


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
    task = state.task()
    if task is None:
        return ""
    return (
        f"{contract.PREFIX} An autopilot loop is running (goal: {contract.clip(state.goal, 300)}). "
        "Your current task:\n" + contract.task_contract(task, state.task_position())
    )


def on_pre_compact(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = owned(ctx)
        if state is None:
            return
        ctx.store.save(guards.on_compact(guards.claim(state, ctx.payload.session_id or "", ctx.host.name)))
        ctx.store.append_event(
            "compact", trigger=ctx.payload.trigger, session=ctx.payload.session_id
        )


def on_tool_failure(ctx: HookContext) -> None:
    with ctx.store.locked():
        state = owned(ctx)
        if state is not None:
            ctx.store.save(guards.on_tool(guards.claim(state, ctx.payload.session_id or "", ctx.host.name)))


def on_post_tool(ctx: HookContext) -> Decision:
    """Answer at once: hand over a background review's fix or reject if one is waiting, and
    start a review of the diff in the background if none is in flight."""
    payload = ctx.payload
    with ctx.store.locked():
        state = owned(ctx)
        if state is None:
            return guards.allow("ignored")
        state = guards.on_tool(guards.claim(state, payload.session_id or "", ctx.host.name))
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
            wants = head not in (state.last_review_head, state.task_base_sha)
            state = state.evolve(last_review_head=head) if wants else state
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
    state = _reclaimed(ctx, state, now)
    claimed = inflight.claim(
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


def _reclaimed(ctx: HookContext, state: State, now: float) -> State:
    state, stale = inflight.reclaim(state, now)
    if stale is not None:
        ctx.store.append_event(
            "inflight.reclaimed",
            kind=stale.kind,
            pid=stale.pid,
            charged_usd=round(stale.reserved_usd, 6),
            session=ctx.payload.session_id,
        )
    return state


def on_stop(ctx: HookContext) -> Decision:
    token = inflight.new_token()
    taken = _take_stop_slot(ctx, token)
    if isinstance(taken, Decision):
        return taken
    try:
        return _judge(ctx, token)
    finally:
        with ctx.store.locked():
            state = ctx.store.load(with_plan=False)
            if state is not None and inflight.holds(state, token):
                ctx.store.save(inflight.release(state, token))


# How often a Stop looks again while a background review of its diff is out.
STOP_POLL_S = 0.05


def _take_stop_slot(ctx: HookContext, token: str) -> Decision | None:
    """Guard the Stop, then take the in-flight slot for its calls. A background review of the
    diff being judged is waited for; one of an older diff is superseded (the Stop reviews the
    final diff itself); another Stop that holds the slot is already judging this turn, so this
    one answers without a call."""
    give_up = inflight.clock() + ctx.config.timeout_s + inflight.SLACK_S
    digest: str | None = None
    while True:
        with ctx.store.locked():
            state = owned(ctx)
            if state is None:
                return guards.allow("ignored")
            now = inflight.clock()
            state = _reclaimed(ctx, guards.claim(state, ctx.payload.session_id or "", ctx.host.name), now)
            slot = state.inflight
            if slot is not None and slot.kind == "review" and review_mode(state) == "edit":
                digest = digest if digest is not None else _digest(ctx, state)
                state = _superseded(ctx, state, digest)
                slot = state.inflight
            if slot is not None and (slot.kind == "stop" or now > give_up):
                state = ctx.store.save(state.evolve(stop_events=state.stop_events + 1))
                return _busy(ctx, state)
            if slot is None:
                return _claim_stop(ctx, state, token, now)
            ctx.store.save(state)
        time.sleep(STOP_POLL_S)


def _digest(ctx: HookContext, state: State) -> str:
    return diff_key(
        gitrepo.diff_since(ctx.store.worktree, state.task_base_sha, exclude=ctx.store.excluded())
    )


def _superseded(ctx: HookContext, state: State, digest: str) -> State:
    slot = state.inflight
    if slot is None or not slot.digest or slot.digest == digest:
        return state
    state, old = inflight.supersede(state)
    if old is not None:
        ctx.store.append_event(
            "review.superseded",
            pid=old.pid,
            charged_usd=round(old.reserved_usd, 6),
            session=ctx.payload.session_id,
        )
    return state


def _claim_stop(ctx: HookContext, state: State, token: str, now: float) -> Decision | None:
    state, guarded = guards.stop_guard(
        state, stop_hook_active=ctx.payload.stop_hook_active, limits=ctx.limits
    )
    if guarded is None:
        # Reviews that go nowhere (issue 23): a pause a background review called for.
        paused = findings_store.stop_check(ctx.store, state, Rules.of(ctx.config))
        if paused is not None:
            state, guarded = paused
    if guarded is not None:
        return finish(ctx, state, guarded)
    claimed = inflight.claim(
        state, "stop", pid=os.getpid(), token=token, now=now, timeout_s=ctx.config.timeout_s
    )
    ctx.store.save(claimed or state)
    return None if claimed is not None else _busy(ctx, state)


def _busy(ctx: HookContext, state: State) -> Decision:
    """Another Stop of this loop is being judged, and its answer is the turn's: this one lets
    the host go on without a call (seed: one verdict call per iteration, never more)."""
    decision = guards.allow("stop.busy")
    record(ctx, state, decision, None)
    return decision


def _judge(ctx: HookContext, token: str) -> Decision:
    """With the slot held: a waiting fix first, then the review of the final diff (unless
    reviews are off or per commit), then the verdict."""
    with ctx.store.locked():
        state = owned(ctx)
        if state is None or not inflight.holds(state, token):
            return guards.allow("ignored")
        head = gitrepo.head_sha(ctx.store.worktree)
        delivered = reducer.take_pending(state, at_stop=True, head=head)
        if delivered is not None:
            return finish(ctx, *delivered)
        review_first = review_mode(state) in ("stop", "edit")
        step = (
            prepare_review(ctx, state, ctx.store.worktree, at_stop=True, token=token)
            if review_first
            else None
        )
    passed = guards.allow("ignored")
    if step is not None:
        passed = resolve(ctx, step, token)
        if passed.blocks or passed.event not in REVIEW_PASSED:
            return passed
    return _verdict(ctx, token, passed)


def _verdict(ctx: HookContext, token: str, otherwise: Decision) -> Decision:
    """The verdict, with the user's checks run first WITHOUT the lock: a `stop` typed during a
    long test run must not wait for it. Under the lock they are then a cache hit (same tree)."""
    results = _checks_unlocked(ctx, token)
    with ctx.store.locked():
        state = owned(ctx)
        if state is None or not inflight.holds(state, token):
            return otherwise
        if results is not None:
            state = state.evolve(last_checks=results)
        step = prepare_verdict(ctx, state, ctx.store.worktree, token)
    return resolve(ctx, step, token)


def _checks_unlocked(ctx: HookContext, token: str) -> list[CheckResult] | None:
    with ctx.store.locked():
        state = owned(ctx)
        if state is None or not inflight.holds(state, token) or not state.checks:
            return None
    return checks_for(ctx, state)


