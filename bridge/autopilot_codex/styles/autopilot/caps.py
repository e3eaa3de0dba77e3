"""The autopilot loop's guards, pure over the state: the checks before a Stop's judgement
and before every paid manager call (caps, iterations, stall, no progress, the budget with the
calls in flight), and the ways the loop leaves `running` (`end`, `manager_failed`).

Nothing here touches files, git, the clock or the network, so every branch is a table test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...closing import closing
from ...contract import PREFIX
from ...guards import Decision, Step, allow
from ...hookio import Answer
from ...meters import over, spent, total_usd
from ...output import terminal_command
from ...spend import of_state, usd
from ...state import State, Status
from ..context import Limits
from .record import of
from .record import spend as spend  # the position and spending text, with the record

if TYPE_CHECKING:
    from ...manager.prompts import Prompt
    from ..context import HookContext


def end(state: State, status: Status, reason: str, event: str) -> Step:
    """Leave `running` for good (until resumed), letting the host stop."""
    new = state.evolve(status=status, stop_reason=reason)
    message = closing(
        f"{PREFIX} {status}: {reason} {spend(new)}{_rails_kept(status)}", of_state(new)
    )
    return new, allow(event, message, _off_context(message))


def _rails_kept(status: Status) -> str:
    """Fail closed: only a clean `done` takes the rails off (Store.save); say so otherwise."""
    if status == "done":
        return ""
    return f". The safety rails stay on until the user runs {terminal_command('stop')}."


def stop_guard(
    state: State, *, stop_hook_active: bool, limits: Limits, now: float | None = None
) -> tuple[State, Decision | None]:
    """The checks before any model call at Stop, in order. Assumes a running, owned loop.
    `now`: the clock, for the time cap (None: not checked)."""
    state = state.evolve(stop_events=state.stop_events + 1)
    if state.compaction_pending:
        # A stop right after a compaction is the host making room, never a turn to judge:
        # blocking it is how peers' loops spun forever on a full context.
        state = state.evolve(compaction_pending=False, idle_stop_blocks=0)
        return state, allow("stop.after_compaction")
    if not stop_hook_active and state.idle_stop_blocks:
        # The previous Stop was not blocked, so the host's chain of blocks is broken.
        state = state.evolve(idle_stop_blocks=0)
    capped = over(state, now, state.budget_usd)
    if capped is not None:
        status, reason = capped
        return end(state, status, reason, f"stop.guard.{status.removeprefix('stopped_')}")
    if state.iteration >= state.max_iterations:
        reason = f"iteration limit {state.max_iterations} reached"
        return end(state, "stopped_iteration_limit", reason, "stop.guard.iterations")
    # Stalled before no progress: an idle implementer (waiting for the user, say) is paused,
    # which can be resumed, as the verdict does; a review's block counts for both (issue 23).
    if state.idle_stop_blocks >= limits.stall_limit:
        reason = f"stalled: {state.idle_stop_blocks} turns ended without running a tool"
        return end(state, "paused", reason, "stop.guard.stalled")
    if of(state).no_progress_streak >= limits.no_progress_limit:
        reason = f"{of(state).no_progress_streak} blocked turns without a new commit"
        return end(state, "aborted", reason, "stop.guard.no_progress")
    return state, None


def reserved(state: State) -> float:
    """What the calls in flight may still cost: the slot's worst case and every reservation."""
    slot = state.inflight.reserved_usd if state.inflight is not None else 0.0
    return slot + sum(r.usd for r in state.reservations)


def fits(state: State, estimated_cost: float, now: float | None = None) -> bool:
    """Whether a call's worst case fits beside what is spent and what is reserved, and no cap
    (tokens, time at `now`) is reached already."""
    if over(state, now, None) is not None:
        return False
    return total_usd(state) + reserved(state) + estimated_cost <= state.budget_usd


def budget_guard(
    state: State, estimated_cost: float, event: str, *, now: float | None
) -> Step | None:
    """The one check before every paid manager call of a loop (review, verdict, `ask`, the
    answer to a question): every cap first (budget, tokens, time at `now`), then a call that
    could take spending past the budget, counting the calls in flight.

    A cap reached or the budget spent out: the loop stops, with the meter's typed status.
    Held by calls in flight only: this call is refused and the loop goes on (their
    reservations come back when they settle).
    """
    # The budget's own check, below, counts this call too.
    capped, total = spent(state, now)
    if capped is not None:
        status, reason = capped
        kind = status.removeprefix("stopped_")
        return end(state, status, reason, event.replace(".budget", f".{kind}"))
    if total + estimated_cost > state.budget_usd:
        left = max(0.0, state.budget_usd - total)
        reason = (
            f"budget used up: {usd(left)} left, the next manager call may cost "
            f"{usd(estimated_cost)}"
        )
        return end(state, "stopped_budget", reason, event)
    held = reserved(state)
    # `fits`, with the caps checked above.
    if total + held + estimated_cost > state.budget_usd:
        left = max(0.0, state.budget_usd - total - held)
        reason = (
            f"the budget left is reserved by a manager call in flight: {usd(left)} free "
            f"({usd(held)} reserved), the next manager call may cost {usd(estimated_cost)}; "
            "try again when it is answered"
        )
        return state, Decision(event, Answer(message=f"{PREFIX} {reason}"), why=reason)
    return None


def priced(
    ctx: HookContext, state: State, prompt: Prompt, event: str, *, now: float | None
) -> tuple[float, Step | None]:
    """A call's worst case (`estimate`) and what `budget_guard` says of it, in one step."""
    worst = estimate(ctx, state, prompt)
    return worst, budget_guard(state, worst, event, now=now)


def after_call(state: State, now: float) -> Step | None:
    """A cap reached while the manager answered: its `continue` (or `fix`) would buy one more
    implementer turn past the cap, so a running loop ends here, with the meter's status."""
    reached = over(state, now, state.budget_usd) if state.status == "running" else None
    if reached is None:
        return None
    status, reason = reached
    return end(state, status, reason, f"verdict.{status.removeprefix('stopped_')}")


def manager_failed(state: State, error: str, event: str, limits: Limits) -> Step:
    """Infrastructure trouble is never a verdict: pause and let the host stop."""
    new = state.evolve(status="paused", stop_reason=f"manager unavailable: {error}")
    message = (
        f"{PREFIX} paused, manager unavailable: {error}. "
        f"Fix it, then {limits.command('resume')}. The safety rails stay on until then "
        f"(or until {limits.command('stop')})."
    )
    return new, allow(event, message, _off_context(message))


def _off_context(message: str) -> str:
    return (
        f"{message}\nThe autopilot loop is no longer supervising this work. Finish the step in "
        "hand, start no new task, and end your turn with a short summary for the user."
    )


def estimate(ctx: HookContext, state: State, prompt: Prompt) -> float:
    """The worst case of one call: what the budget guard checks and the slot reserves, priced
    by the backend that will answer, with what it adds beyond our prompt and caps."""
    from ...manager.select import worst_case_usd

    text = prompt.instructions + prompt.text
    return worst_case_usd(ctx.config, of(state).model, text, ctx.config.max_output_tokens)
