"""What a loop style decides at a hook: the host's `Answer` (in no host's dialect) and the
ledger's event line for it. A record with its constructors, beside the `Answer` it carries;
the rules that decide live in `guards` and each style's reducer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .hookio import ALLOW, Answer
from .state import State


@dataclass(frozen=True)
class Decision:
    """What a style decides at a hook: the host's `Answer` (in no host's dialect), and what
    the ledger's event line says of it."""

    event: str
    answer: Answer = ALLOW
    # For the ledger only: why an allow let the turn go on (a call the budget refused).
    why: str = ""
    # For the ledger only: what the reducer overruled in the manager's answer, and why.
    note: str = ""

    @property
    def blocks(self) -> bool:
        return bool(self.answer.block)

    @property
    def action(self) -> Literal["allow", "block"]:
        return "block" if self.blocks else "allow"

    @property
    def reason(self) -> str:
        return self.answer.block or self.why

    @property
    def message(self) -> str:
        return self.answer.message

    @property
    def context(self) -> str:
        return self.answer.context


def block(event: str, reason: str, message: str = "", note: str = "") -> Decision:
    return Decision(event, Answer(block=reason, message=message), note=note)


Step = tuple[State, Decision]


def allow(event: str, message: str = "", context: str = "") -> Decision:
    return Decision(event, Answer(message=message, context=context))
