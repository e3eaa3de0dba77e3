"""Assorted helpers."""

from __future__ import annotations

UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def human_size(size: int) -> str:
    if size < 0:
        raise ValueError(f"negative size {size}")
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in UNITS[1:]:
        value /= 1024
        if value < 1024 or unit == UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"1 {word}"
    if word.endswith(("s", "x", "ch", "sh")):
        return f"{count} {word}es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return f"{count} {word[:-1]}ies"
    return f"{count} {word}s"


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
