"""What a manager answer means, beyond its shape: empty where it must not be, files it may
touch, and whether a task may advance.

Strict structured output guarantees the JSON fits the schema, not that it says anything: a weak
model fills every field with "" and passes. `meaning` is applied to every answer by
`attempts.ask`, so an empty answer gets the corrective retry with a note naming what was empty.
The other two are pure rules the reducer applies; this module imports nothing heavy until
`meaning` runs, so a hook may use them without loading pydantic.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .schemas import Finding, Plan, Review

V = TypeVar("V")


def meaning(value: V) -> tuple[V, str | None]:
    """`value` with noise removed, and what makes it unusable (None when it is usable).

    Noise is a finding with neither a title nor a recommendation; it is dropped, not retried.
    """
    from .schemas import Plan, Review, Verdict
    if isinstance(value, Review):
        findings = _signal(value.findings)
        review = value.model_copy(update={"findings": findings})
        return review, _review_problem(review)
    if isinstance(value, Verdict):
        verdict = value.model_copy(update={"findings": _signal(value.findings)})
        problem = None if _said(verdict.reason) else "the verdict's reason was empty"
        return verdict, problem
    if isinstance(value, Plan):
        return value, _plan_problem(value)
    return value, None


def _said(text: str) -> bool:
    """Whether text says anything: a letter or digit, not only spaces and punctuation."""
    return any(ch.isalnum() for ch in text)


def _signal(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if _said(f.title) or _said(f.recommendation)]


def _review_problem(review: Review) -> str | None:
    if review.decision == "approve":
        return None
    if _said(review.summary) or any(_said(f.title) for f in review.findings):
        return None
    return (
        f"decision {review.decision} came with an empty summary and no finding with a title; "
        "say what must change"
    )


def _plan_problem(plan: Plan) -> str | None:
    if not plan.tasks:
        return "the plan had no tasks"
    problems: list[str] = []
    seen: set[str] = set()
    for n, task in enumerate(plan.tasks, 1):
        name = f"task {n} ({task.id!r})" if task.id.strip() else f"task {n}"
        if not _said(task.id):
            problems.append(f"{name} has an empty id")
        elif task.id.strip() in seen:
            problems.append(f"{name} repeats the id {task.id.strip()!r}")
        seen.add(task.id.strip())
        if not _said(task.title):
            problems.append(f"{name} has an empty title")
        if not any(_said(a) for a in task.acceptance):
            problems.append(f"{name} has no acceptance criterion")
    # The plan as a graph (ids that collide as branch names, depends_on): lanes run it so.
    from ..lanes.graph import problems as graph_problems

    problems += [p for p in graph_problems(plan) if p not in problems]
    if not problems:
        return None
    shown = "; ".join(problems[:6])
    more = f"; and {len(problems) - 6} more" if len(problems) > 6 else ""
    return f"the plan is incomplete: {shown}{more}"


def restorable(
    revert_files: Iterable[str], changed_files: Iterable[str]
) -> tuple[list[str], list[str]]:
    """Split a reject's `revert_files` into those the task's diff changed (kept, safe to
    restore) and the rest (dropped: outside the task, outside the repository, or not a path).

    Paths are repository-relative; `./x` and `b/x` (a diff header copied by the model) name
    `x`. Each file appears once, in the model's order. Dropped entries are returned as given.
    """
    changed = {_normal(c) for c in changed_files} - {None}
    kept: list[str] = []
    dropped: list[str] = []
    for raw in revert_files:
        path = _normal(raw)
        if path is not None and path not in changed and path[:2] in ("a/", "b/"):
            path = _normal(path[2:])
        if path is not None and path in changed:
            if path not in kept:
                kept.append(path)
        elif raw not in dropped:
            dropped.append(raw)
    return kept, dropped


def _normal(path: str) -> str | None:
    """A repository-relative POSIX path, or None for anything that could leave the repository."""
    text = path.strip()
    if not text or "\0" in text or text.startswith(("/", "\\", "~")) or ":" in text[:3]:
        return None
    clean = posixpath.normpath(text.replace("\\", "/"))
    if clean in (".", "") or clean == ".." or clean.startswith("../"):
        return None
    return clean


@dataclass(frozen=True)
class Advance:
    """Whether the current task may move on, and, when it may not, the line for the ledger."""

    ok: bool
    note: str = ""


def may_advance(task_id: str, task_done: bool, head: str | None, task_base: str | None) -> Advance:
    """A task advances only on the manager's word AND a commit made since the task began.

    `head` is HEAD now, `task_base` the HEAD when the task began (None: no commit yet, e.g. an
    unborn branch). The contract says "green and committed": a claim of done without a new
    commit keeps the task current, and the ledger says why.
    """
    if not task_done:
        return Advance(False)
    if head is None:
        note = f"{task_id} not advanced: the manager called it done, but there is no commit"
        return Advance(False, note)
    if head == task_base:
        return Advance(
            False,
            f"{task_id} not advanced: the manager called it done, but nothing was committed "
            f"since it began (HEAD {head[:12]})",
        )
    return Advance(True)
