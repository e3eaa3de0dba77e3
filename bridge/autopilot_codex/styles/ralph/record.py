"""A ralph loop's own record: what only ralph has. Its session, iteration and cap, clock, stall
count, time cap and budget (0: none) are the envelope's, stored there once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ... import defaults, typedjson
from ...state import StyleRecord


@dataclass(frozen=True)
class RalphRecord(StyleRecord, style="ralph"):
    prompt: str
    completion_promise: str | None = None
    stall_limit: int = defaults.STALL_LIMIT
    # State.tool_events when the last Stop was answered: a higher count means a tool ran since.
    tools_at_block: int = 0

    # ralph itself spends nothing: a budget caps the engine's guards only when one is given.
    budget_optional: ClassVar[bool] = True

    def ended(self, iteration: int) -> int:
        # A ralph loop counts the iteration now running: one fewer has ended.
        return iteration - 1

    def check(self) -> None:
        if self.tools_at_block < 0:
            raise typedjson.Invalid("ralph", "a counter out of range")

