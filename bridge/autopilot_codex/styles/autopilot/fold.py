"""The folded Stop (issue 26): when the Stop arrives and no review of the final diff was made
or is in flight, one manager call (schema `Judgement`) reviews that diff and gives the verdict.
The implementer waits one manager latency per Stop, not two.

The answer is applied as the two calls' answers were: the review part first, through the
reducer and the finding ledger exactly as a review made alone; only when it lets the turn end
does the verdict part count. The call is charged once, on the review's part; the review's
event line then carries no cost and the verdict's line carries the call's tokens and cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...guards import Decision, Step
from ...state import State
from ..context import Limits
from . import findings_store, reducer
from .convergence import Rules
from .effects import record

if TYPE_CHECKING:
    from ...manager import Outcome
    from ..context import HookContext

# Review outcomes after which a Stop goes on to the verdict.
REVIEW_PASSED = frozenset(
    {"review.approve", "review.cached", "review.empty", "review.disputed.passed"}
)


def apply_folded(
    ctx: HookContext,
    state: State,
    outcome: Outcome[Any],
    diff_key: str,
    changed_files: Sequence[str],
    head: str | None,
    limits: Limits,
    *,
    now: str,
    checks_red: str,
    unseen: str = "",
    decided: list[tuple[State, Decision, Outcome[Any] | None]] | None = None,
) -> Step:
    """The folded answer applied: the review part, then (if it passed) the verdict part.
    `decided`: where the review's line goes (a Stop's hold writes it before its save), else
    it is written now."""
    from ...manager import Outcome

    judgement = outcome.value
    review: Outcome[Any] = Outcome(
        judgement.review if judgement is not None else None,
        cost_usd=outcome.cost_usd,
        usage=outcome.usage,
        error=outcome.error,
        attempts=outcome.attempts,
        corrections=outcome.corrections,
    )
    step = reducer.apply_review(
        state, review, diff_key, now=now, limits=limits, changed_files=changed_files
    )
    # The finding ledger and the convergence rules (issue 23), then the turn's count.
    state, decision = findings_store.judged(
        ctx.store,
        step,
        review.value,
        diff_key=diff_key,
        now=now,
        changed_files=changed_files,
        at_stop=True,
        head=head,
        rules=Rules.of(ctx.config),
    )
    if judgement is None or decision.blocks or decision.event not in REVIEW_PASSED:
        return state, decision
    if decided is None:
        record(ctx, state, decision, None)
    else:
        decided.append((state, decision, None))
    # Already charged with the review part: the verdict part is free.
    return reducer.apply_verdict(
        state,
        Outcome(judgement.verdict),
        head,
        limits,
        now=now,
        checks_red=checks_red,
        unseen=unseen,
    )
