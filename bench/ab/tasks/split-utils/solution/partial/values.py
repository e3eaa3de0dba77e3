"""Values read from settings and kept in range."""

from __future__ import annotations

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_bool(text: str) -> bool:
    return text.strip().lower() in TRUE


def clamp(value: float, low: float, high: float) -> float:
    if low > high:
        raise ValueError(f"empty range {low}..{high}")
    return max(low, min(value, high))
