"""The manager: a stronger model that plans, reviews diffs and gives verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from .pricing import Usage

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """A manager call's result. Cost is always set, also when the call failed."""

    value: T | None
    cost_usd: float = 0.0
    usage: Usage = field(default_factory=Usage)
    # One line for the user when `value` is None: timeout, auth, quota, invalid output ...
    error: str | None = None
    attempts: int = 1
    # Of those attempts, how many were corrective retries after an unusable answer.
    corrections: int = 0

    @property
    def ok(self) -> bool:
        return self.value is not None


class Manager(Protocol):
    def ask(self, schema: type[T], instructions: str, prompt: str) -> Outcome[T]: ...
