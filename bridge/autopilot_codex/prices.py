"""A price row of a host's model, in literal dollars per million tokens of each kind, and the
user's own rows (config `implementer_prices`), which come before a host's table.

Each host has its own table (`claude.prices`, `codex.prices`); the row's shape is shared, so
one setting prices either host's models. Standard library only: the hook path imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    def usd(self, input: int, output: int, cache_read: int, cache_write: int) -> float:
        return (
            input * self.input
            + output * self.output
            + cache_read * self.cache_read
            + cache_write * self.cache_write
        ) / 1_000_000


def count(value: object) -> int:
    """A token count as written, 0 for anything that is not a whole number above 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def longest(model: str, table: Mapping[str, Price] | None) -> Price | None:
    """The row of the longest prefix in `table` that starts `model`, or None."""
    found = [prefix for prefix in table or () if model.startswith(prefix)]
    return table[max(found, key=len)] if table and found else None


def parse_own(raw: object) -> dict[str, Price]:
    """The config's `implementer_prices`: {model prefix: {input, output, cache_read,
    cache_write}} in dollars per million tokens; a missing cache price follows the input's.
    Raises ValueError for anything else."""
    if not isinstance(raw, Mapping):
        raise ValueError("an object of model prefixes")
    rows: dict[str, Price] = {}
    for model, row in raw.items():
        if not isinstance(model, str) or not isinstance(row, Mapping):
            raise ValueError("each entry is a model prefix and an object of prices")
        numbers = {}
        for kind in ("input", "output", "cache_read", "cache_write"):
            value = row.get(kind)
            if value is None and kind.startswith("cache") and "input" in numbers:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not 0 <= value < 10_000
            ):
                raise ValueError(f"{model}.{kind} must be dollars per million tokens")
            numbers[kind] = float(value)
        rows[model] = Price(
            numbers["input"],
            numbers["output"],
            numbers.get("cache_read", round(numbers["input"] * 0.1, 6)),
            numbers.get("cache_write", round(numbers["input"] * 1.25, 6)),
        )
    return rows
