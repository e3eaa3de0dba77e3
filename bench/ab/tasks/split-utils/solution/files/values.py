"""Values read from settings and kept in range."""

from __future__ import annotations

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ValueError(f"not a yes/no value: {text!r}")


def clamp(value: float, low: float, high: float) -> float:
    if low > high:
        raise ValueError(f"empty range {low}..{high}")
    return max(low, min(value, high))
