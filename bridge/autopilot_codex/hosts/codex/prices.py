"""What Codex's models cost, in literal dollars per million tokens, to price the implementer's
spend read from its session rollout (`rollout`).

The rows are OpenAI's list prices, the same the manager is charged at (`manager.pricing`,
sourced in docs/pricing.md), so one table is kept up to date for both. Cached input is priced as
such; a cache write (a kind Codex records, OpenAI bills as input) at the input price. Above
272K input tokens in one request the whole request is billed at the long-context rate. A model
the table does not know is priced at its dearest row, so an unknown model never makes a loop
look cheaper than it is. A user's own rows (config `implementer_prices`) come first.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...manager import pricing
from ...prices import Price, longest

TABLE: dict[str, Price] = {
    model: Price(row.input, row.output, row.cached, row.input)
    for model, row in pricing.TABLE.items()
}
DEAREST = max(TABLE.values(), key=lambda p: (p.output, p.input))
LONG_CONTEXT_TOKENS = pricing.LONG_CONTEXT_TOKENS


def price_of(model: str, own: Mapping[str, Price] | None = None) -> tuple[Price, bool]:
    """The model's row and whether it was known; the dearest row when it was not."""
    if (mine := longest(model, own)) is not None:
        return mine, True
    row = pricing.row_for(model) if model else None
    return (TABLE[row], True) if row is not None else (DEAREST, False)


def usd(
    price: Price, input: int, cached: int, cache_write: int, output: int, *, long: bool = False
) -> float:
    """Dollars of one request's tokens; `input` counts the cached and cache-write tokens too,
    as Codex records it. `long`: the request went past the long-context threshold."""
    cached = min(cached, input)
    cache_write = min(cache_write, input - cached)
    plain = input - cached - cache_write
    factor_in, factor_out = (2.0, 1.5) if long else (1.0, 1.0)
    return (
        factor_in
        * (plain * price.input + cached * price.cache_read + cache_write * price.cache_write)
        + factor_out * output * price.output
    ) / 1_000_000
