"""An autopilot loop's own record: its plan's progress, its reviews and verdicts, its manager
settings and consultations. The envelope (`State`) holds it as `own`; state.json keeps it under
`autopilot`. The plan itself stays beside the envelope: it lives in plan.json."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ... import typedjson
from ...spend import of_state
from ...state import ReviewRecord, StyleRecord, Task, VerdictRecord

if TYPE_CHECKING:
    from ...state import State


# How many reviewed diffs are remembered, so an identical diff is never paid for twice.
REVIEW_CACHE_SIZE = 64


@dataclass(frozen=True, kw_only=True)
class AutopilotRecord(StyleRecord, style="autopilot"):
    model: str
    review_mode: str = "edit"
    # What the loop was planned with and its hooks need again ("" / 0: not recorded, as in
    # files written before these fields). Never the API key.
    api: str = ""
    base_url: str = ""
    timeout_s: float = 0.0
    max_output_tokens: int = 0
    current_task: str | None
    # HEAD when the current task started: reviews diff against it.
    task_base_sha: str
    completed_tasks: list[str] = field(default_factory=list)
    no_progress_streak: int = 0
    last_review: ReviewRecord | None = None
    last_verdict: VerdictRecord | None = None
    reviewed: list[ReviewRecord] = field(default_factory=list)
    last_verdict_head: str | None = None
    last_review_head: str | None = None
    # Consultations (`ask`): how many for `consultations_task` (a new task starts from zero) and
    # for the whole loop. Paid like any manager call, but never an iteration.
    consultations: int = 0
    consultations_task: str | None = None
    consultations_total: int = 0
    # A background review's fix or reject that no hook has handed to the implementer yet.
    pending_review: ReviewRecord | None = None

    # Its plan's progress is what every hook of the loop reads.
    required: ClassVar[bool] = True

    def check(self) -> None:
        if not math.isfinite(self.timeout_s):
            raise typedjson.Invalid("timeout_s", "not a finite number")
        for name in (
            "no_progress_streak", "timeout_s", "max_output_tokens", "consultations",
            "consultations_total",
        ):  # fmt: skip
            if getattr(self, name) < 0:
                raise typedjson.Invalid(name, "negative")

    def resumed(self) -> AutopilotRecord:
        # A resumed loop starts its no-progress count afresh.
        return self.evolve(no_progress_streak=0)  # type: ignore[no-any-return]

    def working_on(self) -> str:
        return self.current_task or ""

    def cached_review(self, diff_hash: str) -> ReviewRecord | None:
        return next((r for r in self.reviewed if r.diff_hash == diff_hash), None)


_FIELDS = frozenset(f.name for f in dataclasses.fields(AutopilotRecord))


def of(state: State) -> AutopilotRecord:
    """The autopilot record of an autopilot loop's state."""
    if not isinstance(state.own, AutopilotRecord):
        raise TypeError(f"a {state.style} loop has no autopilot record")
    return state.own


def evolve(state: State, **changes: Any) -> State:
    """The state with changes to its envelope and its autopilot record, named alike."""
    mine = {k: changes.pop(k) for k in [k for k in changes if k in _FIELDS]}
    return state.evolve(own=of(state).evolve(**mine), **changes)


def task_of(state: State) -> Task | None:
    wanted = of(state).current_task
    return next((t for t in state.plan.tasks if t.id == wanted), None)


def position_of(state: State) -> tuple[int, int]:
    ids = [t.id for t in state.plan.tasks]
    current = of(state).current_task
    index = ids.index(current) + 1 if current in ids else len(ids)
    return index, len(ids)


def spend(state: State) -> str:
    """The loop's position and spending, for banners and block reasons (the reducer's and
    the endings' texts alike, so a verdict's banner needs no call of the caps)."""
    return f"(iteration {state.iteration}/{state.max_iterations}, {of_state(state).total_text()})"


def review_mode(state: State, environ: Mapping[str, str] = os.environ) -> str:
    return environ.get("AUTOPILOT_CODEX_REVIEW", "").strip() or of(state).review_mode
