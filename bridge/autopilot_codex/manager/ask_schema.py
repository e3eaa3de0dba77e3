"""The manager's answer to one consultation (`autopilot-codex ask`), as a strict schema.

Apart from `schemas.py` so the consultation can change without touching the loop's own calls.
"""

from __future__ import annotations

from typing import Literal

from .schemas import Strict


class Consultation(Strict):
    answer: str
    confidence: Literal["low", "medium", "high"]
    # A change the manager would make to the plan, for the implementer to read; the plan itself
    # is only ever changed by the manager at a verdict or a re-plan. Null when none.
    plan_change: str | None
