"""Claude Code's model prices as published (dollars per million tokens), and the user's own
rows as the config gives them: a price changed by a dollar, or a bad row let through, is a
budget that stops a loop at the wrong time."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.hosts.claude import prices
from autopilot_codex.hosts.claude.prices import Price

# (input, output) per model prefix, as Anthropic publishes them.
PUBLISHED = {
    "claude-opus-5": (5.0, 25.0),
    "claude-fable-5": (10.0, 50.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


def test_claude_codes_default_model_is_priced_at_its_own_published_rates() -> None:
    # Opus 5.5: $4 in, $20 out, a cache hit at a twentieth of the input price (not a tenth),
    # a five-minute cache write at $5.
    price, known = prices.price_of("claude-opus-5-5")
    assert known and price == Price(4.0, 20.0, 0.2, 5.0)
    # The longer prefix wins over Opus 5's own row.
    assert prices.price_of("claude-opus-5-20990101")[0] == Price(5.0, 25.0, 0.5, 6.25)


@pytest.mark.parametrize(("model", "published"), PUBLISHED.items())
def test_each_row_is_the_published_price(model: str, published: tuple[float, float]) -> None:
    price, known = prices.price_of(f"{model}-20990101")
    assert known
    inp, out = published
    # A cache read is a tenth of the input price; a (five-minute) cache write a quarter more.
    assert price == Price(inp, out, round(inp * 0.1, 6), round(inp * 1.25, 6))


def test_the_table_holds_exactly_the_published_rows() -> None:
    assert set(prices.TABLE) == {*PUBLISHED, "claude-opus-5-5"}
    assert prices.TABLE["claude-opus-4-1"] == prices.DEAREST


def test_a_million_tokens_of_each_kind_costs_its_rate() -> None:
    price = Price(2.0, 8.0, 0.5, 3.0)
    # Exact: each of these is a whole number of dollars in binary floating point too.
    assert price.usd(1_000_000, 0, 0, 0) == 2.0
    assert price.usd(0, 500_000, 0, 0) == 4.0
    assert price.usd(0, 0, 2_000_000, 0) == 1.0
    assert price.usd(0, 0, 0, 1_000_000) == 3.0


def test_the_longest_own_prefix_wins_and_comes_before_the_table() -> None:
    own = prices.parse_own(
        {"claude": {"input": 1, "output": 2}, "claude-sonnet": {"input": 7, "output": 9}}
    )
    assert prices.price_of("claude-sonnet-4-5", own)[0].input == 7.0
    assert prices.price_of("claude-opus-4-1", own)[0].input == 1.0
    assert prices.price_of("claude-opus-4-1", {})[0].input == 15.0


def test_own_cache_prices_are_kept_and_missing_ones_follow_the_input() -> None:
    own = prices.parse_own(
        {
            "a": {"input": 4, "output": 8, "cache_read": 0.25, "cache_write": 6},
            "b": {"input": 4, "output": 8},
            "c": {"input": 4, "output": 8, "cache_write": 0},
        }
    )
    assert own["a"] == Price(4.0, 8.0, 0.25, 6.0)
    assert own["b"] == Price(4.0, 8.0, 0.4, 5.0)
    assert own["c"] == Price(4.0, 8.0, 0.4, 0.0)
    assert prices.parse_own({"free": {"input": 0, "output": 9999.5}})["free"].output == 9999.5


@pytest.mark.parametrize(
    "raw",
    [
        ["claude"],
        {5: {"input": 1, "output": 1}},
        {"claude": [1, 2]},
        {"claude": {"input": True, "output": 1}},
        {"claude": {"input": -1, "output": 1}},
        {"claude": {"input": 1, "output": 10_000}},
        {"claude": {"input": 1}},
        {"claude": {"output": 1, "cache_read": 1, "cache_write": 1}},
        {"claude": {"input": 1, "output": 1, "cache_read": "0.1"}},
    ],
)
def test_a_bad_own_row_is_refused(raw: object) -> None:
    with pytest.raises(ValueError):
        prices.parse_own(raw)


def test_a_price_row_is_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        prices.TABLE["claude-sonnet-4"].input = 0.0  # type: ignore[misc]
