"""What Claude Code's models cost, in literal dollars per million tokens, to price the
implementer's spend read from its transcript (`transcript`).

Cache reads and cache writes are priced as such (a tenth and a quarter more of the input
price, as Anthropic bills them; a write is priced at the five-minute rate). A model the table
does not know is priced at its dearest row, so an unknown model never makes a loop look
cheaper than it is. A user's own rows (config `implementer_prices`) come first.
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


def _row(input: float, output: float) -> Price:
    return Price(input, output, round(input * 0.1, 6), round(input * 1.25, 6))


# Model id prefixes, longest first where one is the start of another.
TABLE: dict[str, Price] = {
    "claude-opus-4-5": _row(5.0, 25.0),
    "claude-opus-4-6": _row(5.0, 25.0),
    "claude-opus-4-1": _row(15.0, 75.0),
    "claude-opus-4": _row(15.0, 75.0),
    "claude-sonnet-4": _row(3.0, 15.0),
    "claude-3-7-sonnet": _row(3.0, 15.0),
    "claude-3-5-sonnet": _row(3.0, 15.0),
    "claude-haiku-4-5": _row(1.0, 5.0),
    "claude-3-5-haiku": _row(0.8, 4.0),
}
DEAREST = max(TABLE.values(), key=lambda p: (p.output, p.input))


def price_of(model: str, own: Mapping[str, Price] | None = None) -> tuple[Price, bool]:
    """The model's row and whether it was known; the dearest row when it was not."""
    for table in (own or {}, TABLE):
        for prefix in sorted(table, key=len, reverse=True):
            if model.startswith(prefix):
                return table[prefix], True
    return DEAREST, False


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
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 10_000:
                raise ValueError(f"{model}.{kind} must be dollars per million tokens")
            numbers[kind] = float(value)
        base = _row(numbers["input"], numbers["output"])
        rows[model] = Price(
            numbers["input"],
            numbers["output"],
            numbers.get("cache_read", base.cache_read),
            numbers.get("cache_write", base.cache_write),
        )
    return rows
