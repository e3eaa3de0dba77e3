"""What every loop style shares, as pure functions over the state: who owns a loop, the
guards checked before any model call (budget, iteration cap, no progress, stall, compaction),
the bookkeeping of tool runs, and the transitions out of `running` and back.

Nothing here touches files, git, the clock or the network, so every branch is a table test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from . import defaults
from .closing import closing
from .contract import PREFIX
from .hookio import ALLOW, Answer
from .hosts import terminal_command
from .meters import over, total_usd
from .spend import of_state, usd
from .state import State, Status


@dataclass(frozen=True)
class Decision:
    """What a style decides at a hook: the host's `Answer` (in no host's dialect), and what
    the ledger's event line says of it."""

    event: str
    answer: Answer = ALLOW
    # For the ledger only: why an allow let the turn go on (a call the budget refused).
    why: str = ""
    # For the ledger only: what the reducer overruled in the manager's answer, and why.
    note: str = ""

    @property
    def blocks(self) -> bool:
        return bool(self.answer.block)

    @property
    def action(self) -> Literal["allow", "block"]:
        return "block" if self.blocks else "allow"

    @property
    def reason(self) -> str:
        return self.answer.block or self.why

    @property
    def message(self) -> str:
        return self.answer.message

    @property
    def context(self) -> str:
        return self.answer.context


def block(event: str, reason: str, message: str = "", note: str = "") -> Decision:
    return Decision(event, Answer(block=reason, message=message), note=note)


@dataclass(frozen=True)
class Limits:
    stall_limit: int = defaults.STALL_LIMIT
    no_progress_limit: int = defaults.NO_PROGRESS_LIMIT
    # How the reader of a message runs one of our commands (a slash command in Claude Code).
    command: Callable[[str], str] = field(default=terminal_command)


Step = tuple[State, Decision]


def allow(event: str, message: str = "", context: str = "") -> Decision:
    return Decision(event, Answer(message=message, context=context))


def owns(state: State, session_id: str | None) -> bool:
    """Whether this session's hooks act on the loop.

    `session` policy: only the session that owns it. An unowned loop (planned from a terminal
    without `--session-id`) is nobody's until a typed prompt `claim`s it: no tool, Stop or compaction
    hook ever claims it, so a session the implementer starts from its shell cannot. A hook
    without a session id owns nothing (failing closed keeps it from spending).
    `driver` policy: every session of the worktree, since the driver starts a fresh one per
    round; the style decides what each hook may do.
    """
    if state.owner == "driver":
        return True
    if not session_id:
        return False
    return state.session_id == session_id


def claim(
    state: State, session_id: str | None, host: str | None = None, *, typed: bool = False
) -> State:
    """The loop as seen by a hook of `session_id` running in `host`: `state` itself when
    nothing changes. The owner's hooks record the host it runs in. Only a prompt the user
    typed (`typed`, UserPromptSubmit) gives an unowned running loop its owner, together with
    a ralph loop's own record of it.

    Why a typed prompt: a loop planned from a terminal must go to the session the user works
    in. That session's prompt comes before any tool it runs, so before any host session its
    implementer could start from its shell: a nested session always finds the loop owned.
    """
    if state.owner == "driver" or not session_id or session_id == "null":
        return state
    if not state.session_id:
        if not typed or state.status != "running":
            return state
        claimed = state.evolve(session_id=session_id, host=host or state.host)
        if state.ralph is not None and not state.ralph.session_id:
            claimed = claimed.evolve(ralph=state.ralph.evolve(session_id=session_id))
        return claimed
    if typed or state.session_id != session_id or not host or state.host == host:
        return state
    return state.evolve(host=host)


def on_tool(state: State) -> State:
    """A tool ran in the owning session: the implementer is working, so the stall count resets."""
    return state.evolve(
        tool_events=state.tool_events + 1, idle_stop_blocks=0, compaction_pending=False
    )


def on_compact(state: State) -> State:
    return state.evolve(compaction_pending=True)


def end(state: State, status: Status, reason: str, event: str) -> Step:
    """Leave `running` for good (until resumed), letting the host stop."""
    new = state.evolve(status=status, stop_reason=reason)
    message = closing(f"{PREFIX} {status}: {reason} {spend(new)}{_rails_kept(status)}", of_state(new))
    return new, allow(event, message, _off_context(message))


def _rails_kept(status: Status) -> str:
    """Fail closed: only a clean `done` takes the rails off (Store.save); say so otherwise."""
    if status == "done":
        return ""
    return f" The safety rails stay on until the user runs {terminal_command('stop')}."


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
    if state.no_progress_streak >= limits.no_progress_limit:
        reason = f"{state.no_progress_streak} blocked turns without a new commit"
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
    capped = over(state, now, None)  # the budget's own check, below, counts this call too
    if capped is not None:
        status, reason = capped
        kind = status.removeprefix("stopped_")
        return end(state, status, reason, event.replace(".budget", f".{kind}"))
    if total_usd(state) + estimated_cost > state.budget_usd:
        left = max(0.0, state.budget_usd - total_usd(state))
        reason = (
            f"budget used up: {usd(left)} left, the next manager call may cost "
            f"{usd(estimated_cost)}"
        )
        return end(state, "stopped_budget", reason, event)
    if not fits(state, estimated_cost, now):
        held = reserved(state)
        left = max(0.0, state.budget_usd - total_usd(state) - held)
        reason = (
            f"the budget left is reserved by a manager call in flight: {usd(left)} free "
            f"({usd(held)} reserved), the next manager call may cost {usd(estimated_cost)}; "
            "try again when it is answered"
        )
        return state, Decision(event, Answer(message=f"{PREFIX} {reason}"), why=reason)
    return None


def charge(state: State, cost_usd: float) -> State:
    return state.evolve(budget_used_usd=state.budget_used_usd + cost_usd)


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


def stop(state: State, reason: str) -> State:
    """The user's stop: deterministic, written by the bridge, read first by every hook."""
    return state.evolve(status="stopped", stop_reason=reason.strip() or "stopped by the user")


def resume(state: State, *, budget_usd: float | None, max_iterations: int | None) -> State:
    update: dict[str, object] = {
        "status": "running",
        "stop_reason": None,
        "idle_stop_blocks": 0,
        "no_progress_streak": 0,
        "generation": state.generation + 1,
    }
    if budget_usd is not None:
        update["budget_usd"] = budget_usd
    if max_iterations is not None:
        update["max_iterations"] = max_iterations
    return state.evolve(**update)


def spend(state: State) -> str:
    """The loop's position and spending, for banners and block reasons."""
    return (
        f"(iteration {state.iteration}/{state.max_iterations}, {of_state(state).total_text()})"
    )
