"""What Claude Code's models cost, in literal dollars per million tokens, to price the
implementer's spend read from its transcript (`transcript`).

Cache reads and cache writes are priced as such (a tenth and a quarter more of the input
price, as Anthropic bills them; a write is priced at the five-minute rate). A model the table
does not know is priced at its dearest row, so an unknown model never makes a loop look
cheaper than it is. A user's own rows (config `implementer_prices`) come first.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...prices import Price, longest, parse_own

__all__ = ["DEAREST", "TABLE", "Price", "parse_own", "price_of"]


def _row(input: float, output: float) -> Price:
    return Price(input, output, round(input * 0.1, 6), round(input * 1.25, 6))


# Model id prefixes, longest first where one is the start of another.
TABLE: dict[str, Price] = {
    # Claude Code's default model with an API key (2.1.332), at its published rates: cache hits
    # at a twentieth of the input price, not the usual tenth.
    "claude-opus-5-5": Price(4.0, 20.0, 0.2, 5.0),
    "claude-opus-5": _row(5.0, 25.0),
    "claude-fable-5": _row(10.0, 50.0),
    "claude-sonnet-5": _row(2.0, 10.0),
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
    row = longest(model, own) or longest(model, TABLE)
    return (row, True) if row is not None else (DEAREST, False)
