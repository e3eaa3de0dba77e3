"""What the manager answers, as strict structured-output schemas.

Strict mode wants every field required, no non-None defaults and no open `dict` fields, so
optional values are `X | None` that the model must fill with null.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import surrogates


class Strict(BaseModel):
    """The base of every schema: frozen, and fields the model adds are dropped."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_lone_surrogates(cls, data: Any) -> Any:
        # An answer may spell half a surrogate pair; it would fail the first write of it.
        return surrogates.scrub(data)


class Task(Strict):
    id: str
    title: str
    files: list[str]
    steps: list[str]
    acceptance: list[str]
    tests: list[str]
    # Ids of the tasks that must merge before this one starts (lanes/graph.py). A factory,
    # not a default value: the strict schema still requires it, and answers stored before it
    # existed still parse.
    depends_on: list[str] = Field(default_factory=list)


class Plan(Strict):
    summary: str
    tasks: list[Task]


Severity = Literal["critical", "high", "medium", "low"]


class Finding(Strict):
    severity: Severity
    file: str | None
    line_start: int | None
    line_end: int | None
    title: str
    recommendation: str
    # The finding's ledger id when a review keeps or restates one ("F3"); null when new.
    # A None default keeps answers without it valid; the strict schema still requires it.
    id: str | None = None


class Review(Strict):
    decision: Literal["approve", "fix", "reject"]
    summary: str
    findings: list[Finding]
    # Files the implementer must restore to the task's base on `reject`.
    revert_files: list[str]
    # Ledger ids of earlier findings this diff fixed (see the prompt's open findings).
    closed: list[str] | None = None


class Verdict(Strict):
    decision: Literal["continue", "done", "abort"]
    reason: str
    # True when the current task meets its acceptance criteria, so the loop moves on.
    current_task_done: bool
    # Extra guidance for the next turn; empty when the task contract says it all.
    instructions: str
    findings: list[Finding]


class Judgement(Strict):
    """A Stop's review of the final diff and its verdict in one answer: one manager latency
    per Stop when no review of that diff was made before it (issue 26). The verdict counts
    only when the review lets the turn end."""

    review: Review
    verdict: Verdict
