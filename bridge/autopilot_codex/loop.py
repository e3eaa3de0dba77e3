"""The pure reducer: (state, event, manager answer) -> (new state, decision), and the guards.

Nothing here touches files, git, the clock or the network, so every branch is a table test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .contract import PREFIX, findings_text, fix_reason, reject_reason, task_contract
from .state import REVIEW_CACHE_SIZE, Finding, ReviewRecord, State, Status, VerdictRecord

if TYPE_CHECKING:
    from .manager import Outcome
    from .manager.schemas import Review, Verdict


@dataclass(frozen=True)
class Decision:
    """What a hook answers. `allow` with no message is the silent exit 0."""

    action: Literal["allow", "block"]
    event: str
    reason: str = ""
    message: str = ""
    # For the implementer when the loop stops mid-turn (PostToolUse): the user's banner alone
    # would leave it working on, unsupervised, until its turn ends.
    context: str = ""

    @property
    def blocks(self) -> bool:
        return self.action == "block"


@dataclass(frozen=True)
class Limits:
    stall_limit: int = 3
    no_progress_limit: int = 3


Step = tuple[State, Decision]


def allow(event: str, message: str = "") -> Decision:
    return Decision("allow", event, message=message)


def owns(state: State, session_id: str | None) -> bool:
    """A loop belongs to the session that started it; an unclaimed loop to whoever asks first.

    A hook without a session id owns nothing: failing closed keeps it from spending.
    """
    if not session_id:
        return False
    return state.session_id in (None, session_id)


def claim(state: State, session_id: str) -> State:
    if state.session_id == session_id:
        return state
    return state.evolve(session_id=session_id)


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
    message = f"{PREFIX} {status}: {reason} {_spend(new)}"
    return new, Decision("allow", event, message=message, context=_off_context(message))


def stop_guard(
    state: State, *, stop_hook_active: bool, limits: Limits
) -> tuple[State, Decision | None]:
    """The checks before any model call at Stop, in order. Assumes a running, owned loop."""
    state = state.evolve(stop_events=state.stop_events + 1)
    if state.compaction_pending:
        # A stop right after a compaction is the host making room, never a turn to judge:
        # blocking it is how peers' loops spun forever on a full context.
        state = state.evolve(compaction_pending=False, idle_stop_blocks=0)
        return state, allow("stop.after_compaction")
    if not stop_hook_active and state.idle_stop_blocks:
        # The previous Stop was not blocked, so the host's chain of blocks is broken.
        state = state.evolve(idle_stop_blocks=0)
    if state.budget_used_usd >= state.budget_usd:
        return end(state, "stopped_budget", "budget used up", "stop.guard.budget")
    if state.iteration >= state.max_iterations:
        reason = f"iteration limit {state.max_iterations} reached"
        return end(state, "stopped_iteration_limit", reason, "stop.guard.iterations")
    if state.no_progress_streak >= limits.no_progress_limit:
        reason = f"{state.no_progress_streak} continue verdicts without a new commit"
        return end(state, "aborted", reason, "stop.guard.no_progress")
    if state.idle_stop_blocks >= limits.stall_limit:
        reason = f"stalled: {state.idle_stop_blocks} turns ended without running a tool"
        return end(state, "paused", reason, "stop.guard.stalled")
    return state, None


def budget_guard(state: State, estimated_cost: float, event: str) -> Step | None:
    """Refuse a call that could take spending past the budget."""
    if state.budget_used_usd + estimated_cost > state.budget_usd:
        left = max(0.0, state.budget_usd - state.budget_used_usd)
        reason = f"budget used up: ${left:.2f} left, the next manager call may cost ${estimated_cost:.2f}"
        return end(state, "stopped_budget", reason, event)
    return None


def charge(state: State, cost_usd: float) -> State:
    return state.evolve(budget_used_usd=state.budget_used_usd + cost_usd)


def manager_failed(state: State, error: str, event: str) -> Step:
    """Infrastructure trouble is never a verdict: pause and let the host stop."""
    new = state.evolve(status="paused", stop_reason=f"manager unavailable: {error}")
    message = (
        f"{PREFIX} paused, manager unavailable: {error}. "
        "Fix it, then /autopilot-codex:codex-resume."
    )
    return new, Decision("allow", event, message=message, context=_off_context(message))


def _off_context(message: str) -> str:
    return (
        f"{message}\nThe autopilot loop is no longer supervising this work. Finish the step in "
        "hand, start no new task, and end your turn with a short summary for the user."
    )


def apply_review(state: State, outcome: Outcome[Review], diff_hash: str) -> Step:
    state = charge(state, outcome.cost_usd)
    review = outcome.value
    if review is None:
        return manager_failed(state, outcome.error or "no answer", "review.unavailable")
    findings = [Finding.of(f) for f in review.findings]
    if review.decision == "approve":
        reason = ""
    elif review.decision == "fix":
        reason = fix_reason(review.summary, findings)
    else:
        reason = reject_reason(review.summary, findings, review.revert_files, state.task_base_sha)
    record = ReviewRecord(
        diff_hash=diff_hash,
        decision=review.decision,
        summary=review.summary,
        reason=reason,
        findings=findings,
    )
    cache = [record, *[r for r in state.reviewed if r.diff_hash != diff_hash]][:REVIEW_CACHE_SIZE]
    state = state.evolve(last_review=record, reviewed=cache)
    return state, replay_review(record)


def replay_review(record: ReviewRecord) -> Decision:
    """The answer for a reviewed diff; identical diffs reuse it without a model call."""
    if record.decision == "approve":
        return allow(f"review.{record.decision}")
    return Decision("block", f"review.{record.decision}", reason=record.reason)


def apply_verdict(
    state: State, outcome: Outcome[Verdict], head: str | None, limits: Limits
) -> Step:
    state = charge(state, outcome.cost_usd)
    state = state.evolve(iteration=state.iteration + 1)
    verdict = outcome.value
    if verdict is None:
        return manager_failed(state, outcome.error or "no answer", "verdict.unavailable")
    record = VerdictRecord(
        decision=verdict.decision,
        reason=verdict.reason,
        iteration=state.iteration,
        current_task_done=verdict.current_task_done,
    )
    state = state.evolve(last_verdict=record)
    if verdict.decision == "done":
        if state.current_task is not None and state.current_task not in state.completed_tasks:
            state = state.evolve(completed_tasks=[*state.completed_tasks, state.current_task])
        state = state.evolve(current_task=None)
        return end(state, "done", verdict.reason or "goal achieved", "verdict.done")
    if verdict.decision == "abort":
        return end(state, "aborted", verdict.reason or "manager aborted", "verdict.abort")
    return _continue(state, verdict, head, limits)


def _continue(state: State, verdict: Verdict, head: str | None, limits: Limits) -> Step:
    previous = state.last_verdict_head or state.base_sha
    streak = state.no_progress_streak + 1 if head == previous else 0
    state = state.evolve(no_progress_streak=streak, last_verdict_head=head)
    if streak >= limits.no_progress_limit:
        if state.idle_stop_blocks:
            # No commit, and no tool either since the last block: an idle implementer (waiting
            # for the user, say) is paused, which can be resumed, rather than aborted.
            reason = f"stalled: {streak} continue verdicts without a tool run or a commit"
            return end(state, "paused", reason, "verdict.stalled")
        reason = f"{streak} continue verdicts without a new commit"
        return end(state, "aborted", reason, "verdict.no_progress")
    advanced = ""
    if verdict.current_task_done and state.current_task is not None:
        done_id = state.current_task
        ids = [t.id for t in state.plan.tasks]
        later = ids[ids.index(done_id) + 1 :] if done_id in ids else []
        completed = state.completed_tasks
        if done_id not in completed:
            completed = [*completed, done_id]
        state = state.evolve(
            completed_tasks=completed,
            task_base_sha=head or state.task_base_sha,
            # Past the last task no contract is left: the manager's instructions lead.
            current_task=later[0] if later else None,
        )
        advanced = f"Task {done_id} accepted. " + ("" if later else "All planned tasks are done. ")
    state = state.evolve(idle_stop_blocks=state.idle_stop_blocks + 1)
    task = state.current_task or "wrap-up"
    banner = f"{PREFIX} continue {_spend(state)}: {task}"
    reason = continue_reason(state, verdict, advanced)
    return state, Decision("block", "verdict.continue", reason=reason, message=banner)


def continue_reason(state: State, verdict: Verdict, advanced: str) -> str:
    parts = [
        f"{PREFIX} Manager verdict: continue {_spend(state)}. {advanced}{verdict.reason}".rstrip()
    ]
    if verdict.instructions.strip():
        parts.append(verdict.instructions.strip())
    if verdict.findings:
        parts.append("Findings:\n" + findings_text([Finding.of(f) for f in verdict.findings]))
    task = state.task()
    if task is not None:
        parts.append(task_contract(task, state.task_position()))
    return "\n\n".join(parts)


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


def _spend(state: State) -> str:
    return (
        f"(iteration {state.iteration}/{state.max_iterations}, "
        f"${state.budget_used_usd:.2f} of ${state.budget_usd:.2f})"
    )
