"""What a manager call costs, from the usage the API reports.

Prices are USD per 1M tokens, Standard tier, from the sources listed in
docs/pricing.md (checked 2026-11-29). Verify against OpenAI's pricing page before relying on
them; `AUTOPILOT_CODEX_PRICES` overrides the table.
"""

from __future__ import annotations

import math
import operator
import os
import re
from dataclasses import astuple, dataclass
from typing import Any

from ..errors import BridgeError


@dataclass(frozen=True)
class Price:
    input: float
    cached: float
    output: float


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(*map(operator.add, astuple(self), astuple(other)))

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    @classmethod
    def reported(cls, *counts: Any) -> Usage:
        """Input, cached and output counts as a server sent them: anything but a positive whole
        number counts 0."""
        return cls(*(c if isinstance(c, int) and c > 0 else 0 for c in counts))


# Longest prefix wins, so "gpt-5-codex" never resolves to "gpt-5".
TABLE: dict[str, Price] = {
    "gpt-6.2-astra": Price(8.00, 0.40, 40.00),
    "gpt-6.2-sol": Price(2.00, 0.10, 10.00),
    "gpt-6.1-sol": Price(2.00, 0.10, 10.00),
    "gpt-6.1-terra": Price(1.00, 0.05, 5.00),
    "gpt-6-astra": Price(10.00, 1.00, 50.00),
    "gpt-6-sol": Price(2.00, 0.20, 10.00),
    "gpt-6-luna": Price(0.10, 0.01, 0.50),
    "gpt-5.6-sol": Price(4.00, 0.40, 20.00),
    "gpt-5.6-terra": Price(2.00, 0.20, 12.00),
    "gpt-5.6-luna": Price(0.20, 0.02, 1.20),
    "gpt-5.5": Price(5.00, 0.50, 30.00),
    "gpt-5.4-nano": Price(0.20, 0.02, 1.25),
    "gpt-5.4-mini": Price(0.75, 0.075, 4.50),
    "gpt-5.4": Price(2.50, 0.25, 15.00),
    "gpt-5.3-codex": Price(1.75, 0.175, 14.00),
    "gpt-5.2-codex": Price(1.75, 0.175, 14.00),
    "gpt-5.1-codex-max": Price(1.25, 0.125, 10.00),
    "gpt-5.1-codex": Price(1.25, 0.125, 10.00),
    "gpt-5-codex": Price(1.25, 0.125, 10.00),
    "gpt-5.1": Price(1.25, 0.125, 10.00),
    "gpt-5-mini": Price(0.25, 0.025, 2.00),
    "gpt-5": Price(1.25, 0.125, 10.00),
}

# Never under-count: a model we do not know is charged at the dearest row.
MOST_EXPENSIVE = max(TABLE.values(), key=lambda p: (p.output, p.input))

# Above this many input tokens the whole request is billed at a higher rate.
LONG_CONTEXT_TOKENS = 272_000

_DATE_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def price_for(model: str) -> Price:
    override = os.environ.get("AUTOPILOT_CODEX_PRICES", "").strip()
    if override:
        return parse_override(override)
    row = row_for(model)
    return TABLE[row] if row is not None else MOST_EXPENSIVE


def row_for(model: str) -> str | None:
    """The table row a model is priced by, or None for a model the table does not know."""
    name = _DATE_SUFFIX.sub("", model.strip().lower())
    for prefix in sorted(TABLE, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "-"):
            return prefix
    return None


def parse_override(text: str) -> Price:
    """`AUTOPILOT_CODEX_PRICES="input,cached,output"` in USD per 1M tokens (e.g. `0,0,0`)."""
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []
    # `float` takes "nan" and "inf"; neither is a price, and NaN slips past every comparison.
    if len(parts) != 3 or not all(math.isfinite(p) and p >= 0 for p in parts):
        raise BridgeError(
            "AUTOPILOT_CODEX_PRICES must be three finite non-negative numbers: in,cached,out"
        )
    return Price(parts[0], parts[1], parts[2])


def cost_usd(usage: Usage, price: Price) -> float:
    """The cost of ONE request: the long-context rate depends on that request's input alone,
    so usage summed over several requests must be priced request by request."""
    cached = min(usage.cached_tokens, usage.input_tokens)
    uncached = max(0, usage.input_tokens - cached)
    factor_in, factor_out = (2.0, 1.5) if usage.input_tokens > LONG_CONTEXT_TOKENS else (1.0, 1.0)
    return (
        uncached * price.input * factor_in
        + cached * price.cached * factor_in
        + usage.output_tokens * price.output * factor_out
    ) / 1_000_000


def estimate_tokens(text: str) -> int:
    """A true ceiling on the tokens `text` costs, for budget checks: a token for every UTF-8
    byte. The tokenizer reads bytes and a token is at least one, so no text costs more;
    counting fewer is no ceiling: an emoji it has no merge for costs a token a byte (4), and
    ASCII the merges do not fit (`a1!a1!...`, letters and punctuation interleaved) up to a
    token a character, 3 times the 3 characters a token this once counted."""
    return len(text.encode("utf-8", "surrogatepass")) + 1


def unseen(text: str, output_tokens: int) -> Usage:
    """What an attempt whose answer never reached us (a timeout) may have cost: the server may
    have answered, and billed it, after we stopped waiting. Charged at its ceiling, a token a
    byte and the full output, so a run of such calls never spends past the budget unseen."""
    return Usage(estimate_tokens(text), 0, output_tokens)


# Answers the API completes and bills per manager call at most: the first, and one corrective
# retry when it was invalid. Transport failures (429, 5xx, refused) produce no billed answer.
BILLED_ATTEMPTS = 2

# What the corrective retry sends beyond the first prompt (`prompts.corrective`): a note of
# about 110 ASCII characters and the error clipped to 500 characters (`NOTE_ERROR_CHARS`), 4
# bytes each at worst, and the separator a request puts between instructions and input. The
# note is added whole, and cutting the prompt to its cap only takes bytes away.
RETRY_NOTE_TOKENS = 2_200


def ceiling_usd(prompt: str, max_output_tokens: int, price: Price) -> float:
    """What one manager call could cost at most (`select.worst_case_usd` adds the backend's
    own text and output cap); the budget guard refuses a call that could take spending past
    the budget. Every billed attempt at a token a byte and the full output, the retries with
    their note."""
    tokens = estimate_tokens(prompt)
    first = cost_usd(Usage(tokens, 0, max_output_tokens), price)
    retry = cost_usd(Usage(tokens + RETRY_NOTE_TOKENS, 0, max_output_tokens), price)
    return first + (BILLED_ATTEMPTS - 1) * retry
