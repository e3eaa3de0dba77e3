"""The autopilot style's reducer (seed 002): a review or a verdict from the manager, applied to
the state, gives the new state and the hook's decision. Pure: no files, git, clock or network;
`now` is passed in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...config import check_specs
from ...contract import PREFIX, findings_text, fix_reason, reject_reason, task_contract
from ...guards import Decision, Step, allow, block, charge
from ...hookio import Answer
from ...manager.answers import may_advance, restorable
from ...seatbelt import with_seatbelt
from ...state import Finding, Plan, ReviewRecord, State, VerdictRecord
from ..context import Limits
from . import idle, inflight
from .caps import after_call, end, manager_failed
from .record import (
    REVIEW_CACHE_SIZE,
    AutopilotRecord,
    evolve,
    of,
    position_of,
    spend,
    task_of,
)

if TYPE_CHECKING:
    from ...config import Config
    from ...manager import Outcome
    from ...manager.schemas import Review, Verdict


def start(
    *,
    goal: str,
    plan: Plan,
    base_sha: str,
    worktree: str,
    config: Config,
    cost_usd: float,
    session_id: str | None,
    host: str,
    generation: int,
) -> State:
    """idle -> running: a planned goal, its first task current, the plan already paid for."""
    return State(
        goal=goal,
        plan=plan,
        base_sha=base_sha,
        max_iterations=config.max_iterations,
        max_tokens=config.max_tokens,
        max_seconds=config.max_duration,
        budget_usd=config.budget_usd,
        budget_used_usd=cost_usd,
        session_id=session_id or None,
        host=host,
        worktree=worktree,
        generation=generation,
        own=AutopilotRecord(
            model=config.model,
            review_mode=config.review,
            current_task=plan.tasks[0].id,
            task_base_sha=base_sha,
            # Kept with the loop: its hooks may run where the shell's environment is not.
            api=config.api,
            base_url=config.base_url,
            timeout_s=config.timeout_s,
            max_output_tokens=config.max_output_tokens,
        ),
        # The user's checks only; a plan's `tests` are advice and never run.
        checks=check_specs(config),
    )


def apply_review(
    state: State,
    outcome: Outcome[Review],
    diff_hash: str,
    *,
    now: str,
    limits: Limits,
    at_stop: bool = False,
    changed_files: Sequence[str] = (),
) -> Step:
    state = charge(state, outcome.cost_usd)
    review = outcome.value
    if review is None:
        return manager_failed(state, outcome.error or "no answer", "review.unavailable", limits)
    findings = [Finding.of(f) for f in review.findings]
    decision, note = review.decision, ""
    # A reject may only restore files the task's diff changed: a model naming `1` or any
    # tracked file must not make the implementer throw away unrelated work.
    kept, dropped = restorable(review.revert_files, changed_files)
    if dropped:
        note = "revert_files dropped (not changed by this task): " + ", ".join(dropped)
    if decision == "reject" and not kept:
        decision = "fix"
        note = (note + "; " if note else "") + "a reject with nothing to restore is a fix"
    if decision == "approve":
        reason = ""
    elif decision == "fix":
        reason = fix_reason(review.summary, findings)
    else:
        reason = reject_reason(review.summary, findings, kept, of(state).task_base_sha)
    record = ReviewRecord(
        diff_hash=diff_hash,
        decision=decision,
        summary=review.summary,
        reason=reason,
        findings=findings,
        at=now,
    )
    cache = [record, *[r for r in of(state).reviewed if r.diff_hash != diff_hash]]
    state = evolve(state, last_review=record, reviewed=cache[:REVIEW_CACHE_SIZE])
    state, answer = _counted(state, replay_review(record), at_stop)
    return state, dataclasses.replace(answer, note=note)


def apply_background_review(
    state: State,
    outcome: Outcome[Review],
    diff_hash: str,
    *,
    now: str,
    changed_files: Sequence[str] = (),
) -> Step:
    """A review made off the critical path. A fix or reject waits in `pending_review` for the
    next hook that can speak; a failed call only costs money: the Stop reviews again."""
    if outcome.value is None:
        failed = charge(state, outcome.cost_usd)
        return failed, allow("review.unavailable.background", outcome.error or "no answer")
    state, decision = apply_review(
        state, outcome, diff_hash, now=now, limits=Limits(), changed_files=changed_files
    )
    if decision.blocks:
        state = evolve(state, pending_review=of(state).last_review)
    return state, decision


def take_pending(state: State, *, at_stop: bool, head: str | None = None) -> Step | None:
    """Hand over a background review's fix or reject, once."""
    record = of(state).pending_review
    if record is None:
        return None
    decision = replay_review(record)
    decision = Decision(
        f"{decision.event}.delivered", Answer(block=decision.answer.block), why=decision.why
    )
    return _counted(evolve(state, pending_review=None), decision, at_stop, head)


def at_stop(
    state: State, cached: ReviewRecord | None, head: str | None
) -> tuple[Step | None, Step | None]:
    """A Stop's review without a call, as (delivered, replayed): a background review's fix
    or reject waiting is the answer, counted as the Stop's turn; else the final diff's
    `cached` review replayed, not yet counted (the finding ledger weighs it first)."""
    delivered = take_pending(state, at_stop=True, head=head)
    if delivered is not None or cached is None:
        return delivered, None
    return None, replay_cached(state, cached, at_stop=False)


def replay_cached(
    state: State, record: ReviewRecord, *, at_stop: bool, head: str | None = None
) -> Step:
    """An identical diff reuses its review without a model call."""
    decision = replay_review(record)
    decision = dataclasses.replace(decision, event="review.cached")
    return _counted(state, decision, at_stop, head)


def _counted(state: State, decision: Decision, at_stop: bool, head: str | None = None) -> Step:
    """A review that blocks a Stop is a turn like a verdict's block: every guard counts it."""
    if not (at_stop and decision.blocks):
        return state, decision
    from .convergence import count_turn

    return count_turn(state, decision, at_stop, head), decision


def replay_review(record: ReviewRecord) -> Decision:
    """The answer for a reviewed diff; identical diffs reuse it without a model call."""
    if record.decision == "approve":
        return allow(f"review.{record.decision}")
    return block(f"review.{record.decision}", record.reason)


def apply_verdict(
    state: State,
    outcome: Outcome[Verdict],
    head: str | None,
    limits: Limits,
    *,
    now: str,
    checks_red: str = "",
    unseen: str = "",
) -> Step:
    """`checks_red`: the failure text of the user's checks on this tree, "" when they passed or
    there are none. A red check overrules `done` and a task advance; an abort stands. So does
    `unseen` (`gitrepo.unseen_in_head`): a done or an advance hands on HEAD, and one holding
    what the reviewed tree does not was never shown to the manager."""
    state = charge(state, outcome.cost_usd)
    state = state.evolve(iteration=state.iteration + 1)
    verdict = outcome.value
    if verdict is None:
        return manager_failed(state, outcome.error or "no answer", "verdict.unavailable", limits)
    if unseen and (verdict.decision == "done" or verdict.current_task_done):
        checks_red = "\n\n".join(filter(None, [checks_red, unseen]))
    record = VerdictRecord(
        decision=verdict.decision,
        reason=verdict.reason,
        iteration=state.iteration,
        current_task_done=verdict.current_task_done,
        at=now,
    )
    state = evolve(state, last_verdict=record)
    if verdict.decision == "done" and not checks_red:
        own = of(state)
        if own.current_task is not None and own.current_task not in own.completed_tasks:
            state = evolve(state, completed_tasks=[*own.completed_tasks, own.current_task])
        state = evolve(state, current_task=None)
        return end(state, "done", verdict.reason or "goal achieved", "verdict.done")
    if verdict.decision == "abort":
        return end(state, "aborted", verdict.reason or "manager aborted", "verdict.abort")
    return _continue(state, verdict, head, limits, checks_red)


def answered(
    state: State,
    asked: State,
    outcome: Outcome[Any],
    reduce: Callable[[State], Step],
    *,
    token: str,
    event: str,
    breach: bool,
    now: float,
) -> list[tuple[State, Decision, Outcome[Any] | None]]:
    """A Stop's call answered, applied to the loop as the last hold loaded it (`asked`: as
    the call was prepared; `reduce`: the verdict's or the folded answer's reducer). What the
    hold decided, in the order of its lines; the last state is the one saved.

    The call's slot and reservation go (nothing below reads them), and its real cost is
    charged; a slot reclaimed meanwhile was charged its worst case too, which errs on the
    side of the budget. A loop stopped or re-planned while the manager thought: the money is
    spent, the answer is moot. Else the answer, paused on a second breach of the verdict's
    contract (`idle.paused`), then ended if a cap was reached meanwhile (`caps.after_call`)."""
    state = inflight.release(state, token)
    if state.generation != asked.generation or state.status != "running":
        return [(charge(state, outcome.cost_usd), allow(f"{event}.discarded"), outcome)]
    state, decision = reduce(state)
    if breach:
        state, decision = idle.paused((state, decision))
    capped = after_call(state, now) if decision.blocks else None
    decided: list[tuple[State, Decision, Outcome[Any] | None]] = [(state, decision, outcome)]
    return decided if capped is None else [*decided, (*capped, None)]


def _continue(
    state: State, verdict: Verdict, head: str | None, limits: Limits, checks_red: str = ""
) -> Step:
    previous = of(state).last_verdict_head or state.base_sha
    streak = of(state).no_progress_streak + 1 if head == previous else 0
    state = evolve(state, no_progress_streak=streak, last_verdict_head=head)
    if streak >= limits.no_progress_limit:
        # A `done` reaches here only overruled by a red check: never call it a `continue`.
        done = verdict.decision != "continue"
        said = "verdicts" if done else "continue verdicts"
        why = ", the last a done the checks overruled" if done else ""
        if state.idle_stop_blocks:
            # No commit, and no tool either since the last block: an idle implementer (waiting
            # for the user, say) is paused, which can be resumed, rather than aborted.
            reason = f"stalled: {streak} {said} without a tool run or a commit{why}"
            return end(state, "paused", reason, "verdict.stalled")
        reason = f"{streak} {said} without a new commit{why}"
        return end(state, "aborted", reason, "verdict.no_progress")
    advanced = note = ""
    overruled = bool(checks_red) and (verdict.decision == "done" or verdict.current_task_done)
    own = of(state)
    done_id = own.current_task
    if verdict.current_task_done and done_id is not None and not checks_red:
        # "Green and committed": the manager's word alone does not move the task on.
        verdict_ok = may_advance(done_id, True, head, own.task_base_sha)
        note = verdict_ok.note
    else:
        verdict_ok = None
    if verdict_ok is not None and verdict_ok.ok and done_id is not None:
        ids = [t.id for t in state.plan.tasks]
        later = ids[ids.index(done_id) + 1 :] if done_id in ids else []
        completed = own.completed_tasks
        if done_id not in completed:
            completed = [*completed, done_id]
        state = evolve(
            state,
            completed_tasks=completed,
            task_base_sha=head or own.task_base_sha,
            # Past the last task no contract is left: the manager's instructions lead.
            current_task=later[0] if later else None,
        )
        advanced = f"Task {done_id} accepted. " + ("" if later else "All planned tasks are done. ")
    state = state.evolve(idle_stop_blocks=state.idle_stop_blocks + 1)
    task = of(state).current_task or "wrap-up"
    where = spend(state)
    banner = with_seatbelt(f"{PREFIX} continue {where}: {task}", state.wall)
    if overruled:
        reason = overrule_reason(state, verdict, checks_red, where)
        note = f"the checks overrule the manager's {_claim(verdict)}"
        return state, block("checks.overrule", reason, banner, note)
    reason = continue_reason(state, verdict, advanced, where)
    if checks_red:
        reason += "\n\n" + checks_red
    return state, block("verdict.continue", reason, banner, note)


def _claim(verdict: Verdict) -> str:
    return "done" if verdict.decision == "done" else "task advance"


def overrule_reason(
    state: State, verdict: Verdict, checks_red: str, where: str | None = None
) -> str:
    """The block when the manager would end the loop or move on but a check is red.
    `where`: the loop's position and spending (`record.spend`), when the caller has it."""
    would = "end the loop as done" if verdict.decision == "done" else "accept the current task"
    where = spend(state) if where is None else where
    parts = [
        f"{PREFIX} The manager would {would} {where}, but your checks say otherwise.",
        checks_red,
    ]
    if verdict.decision != "done" and verdict.instructions.strip():
        parts.append(verdict.instructions.strip())
    task = task_of(state)
    if task is not None:
        parts.append(task_contract(task, position_of(state)))
    return "\n\n".join(parts)


def continue_reason(state: State, verdict: Verdict, advanced: str, where: str | None = None) -> str:
    where = spend(state) if where is None else where
    parts = [f"{PREFIX} Manager verdict: continue {where}. {advanced}{verdict.reason}".rstrip()]
    if verdict.instructions.strip():
        parts.append(verdict.instructions.strip())
    if verdict.findings:
        parts.append("Findings:\n" + findings_text([Finding.of(f) for f in verdict.findings]))
    task = task_of(state)
    if task is not None:
        parts.append(task_contract(task, position_of(state)))
    return "\n\n".join(parts)
