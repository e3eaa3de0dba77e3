"""The run's figures per arm, from its raw trials: resolve rate and interval, the paired
difference against the baseline arm, dollars per resolved task, false-done rate, time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from . import stats
from .records import Trial

BASELINE = "solo"


@dataclass(frozen=True)
class ArmSummary:
    arm: str
    trials: int
    resolved: int
    rate: float
    low: float  # Wilson 95 %
    high: float
    said_done: int
    false_done: int
    # Of the arm's "done" claims, the share the hidden tests refuted (None: it never claimed).
    false_done_rate: float | None
    usd: float
    manager_usd: float
    manager_share: float | None
    usd_per_resolved: float | None
    tokens: int
    median_wall_s: float | None
    errors: int
    versus_baseline: stats.Paired | None
    # Questions the implementer put to the scripted user, those the task's answers covered,
    # and those the manager answered in the user's stead (bench/ab/user.py).
    questions_asked: int = 0
    questions_answered: int = 0
    questions_by_manager: int = 0


def summarise(trials: Sequence[Trial], baseline: str = BASELINE) -> list[ArmSummary]:
    """One summary per arm, in the order arms first appear; the baseline's own has no pairing."""
    arms = list(dict.fromkeys(t.arm for t in trials))
    base = {(t.task, t.rep): t.resolved for t in trials if t.arm == baseline}
    out = []
    for arm in arms:
        mine = [t for t in trials if t.arm == arm]
        resolved = sum(t.resolved for t in mine)
        said = sum(t.said_done for t in mine)
        false = sum(t.false_done for t in mine)
        usd = sum(t.usd for t in mine)
        manager = sum(t.manager_usd for t in mine)
        low, high = stats.wilson(resolved, len(mine))
        pairs = [(t.resolved, base[(t.task, t.rep)]) for t in mine if (t.task, t.rep) in base]
        versus = stats.paired(pairs) if arm != baseline and pairs else None
        out.append(
            ArmSummary(
                arm=arm,
                trials=len(mine),
                resolved=resolved,
                rate=resolved / len(mine),
                low=low,
                high=high,
                said_done=said,
                false_done=false,
                false_done_rate=stats.ratio(false, said),
                usd=usd,
                manager_usd=manager,
                manager_share=stats.ratio(manager, usd),
                usd_per_resolved=stats.ratio(usd, resolved),
                tokens=sum(t.tokens for t in mine),
                median_wall_s=stats.median([t.wall_s for t in mine]),
                errors=sum(1 for t in mine if t.error),
                versus_baseline=versus,
                questions_asked=sum(t.questions_asked for t in mine),
                questions_answered=sum(t.questions_answered for t in mine),
                questions_by_manager=sum(t.questions_by_manager for t in mine),
            )
        )
    return out


def to_json(summaries: Sequence[ArmSummary], meta: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "meta": meta, "arms": [asdict(s) for s in summaries]}
