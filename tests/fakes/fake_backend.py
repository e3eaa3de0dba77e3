"""A fourth manager backend, as small as one can be: checked by mypy against `Backend` in
tests/unit/test_registries_typed.py, and registered there for one test."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from autopilot_codex.manager import Outcome
from autopilot_codex.manager.pricing import Price

if TYPE_CHECKING:
    from pydantic import BaseModel

    from autopilot_codex.config import Config

T = TypeVar("T", bound="BaseModel")

OVERHEAD_CHARS = 0
ANSWER = "the fake backend never answers"


class FakeManager:
    def ask(self, schema: type[T], instructions: str, prompt: str) -> Outcome[T]:
        return Outcome(None, error=ANSWER)


def make(model: str, config: Config) -> FakeManager:
    return FakeManager()


def problem(config: Config) -> str | None:
    return None


def price(model: str, config: Config) -> Price:
    return Price(input=1.0, cached=0.5, output=2.0)


def output_cap(asked: int) -> int:
    return asked
