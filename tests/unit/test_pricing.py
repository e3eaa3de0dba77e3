"""Pricing with literal prices and literal dollars: nothing here is computed by the code under
test, so a wrong table row or a wrong rule cannot agree with itself."""

from __future__ import annotations

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.manager.pricing import (
    Price,
    Usage,
    ceiling_usd,
    cost_usd,
    estimate_tokens,
    parse_override,
    price_for,
    row_for,
    unseen,
)

SOL = Price(2.00, 0.10, 10.00)


@pytest.mark.parametrize(
    ("model", "row"),
    [
        ("gpt-5-codex", "gpt-5-codex"),
        ("gpt-5", "gpt-5"),
        ("gpt-5.1-codex-max", "gpt-5.1-codex-max"),
        ("gpt-5.1-codex", "gpt-5.1-codex"),
        ("gpt-5.1-codex-mini", "gpt-5.1-codex"),
        ("gpt-5.4-mini", "gpt-5.4-mini"),
        ("gpt-5.5-2026-04-23", "gpt-5.5"),
        ("gpt-5.1-codex-max-2026-01-15", "gpt-5.1-codex-max"),
        ("  GPT-6.2-Sol ", "gpt-6.2-sol"),
        ("gpt-50", None),
        ("smollm2-135m-instruct", None),
    ],
)
def test_the_longest_prefix_names_the_row(model: str, row: str | None) -> None:
    assert row_for(model) == row


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-5.4-mini", Price(0.75, 0.075, 4.50)),
        ("gpt-5.4-mini-2026-03-17", Price(0.75, 0.075, 4.50)),
        ("gpt-5.4", Price(2.50, 0.25, 15.00)),
        ("gpt-5.5-2026-04-23", Price(5.00, 0.50, 30.00)),
        ("gpt-6.2-astra", Price(8.00, 0.40, 40.00)),
        ("gpt-5-mini", Price(0.25, 0.025, 2.00)),
        # Unknown models are charged at the dearest row, gpt-6-astra, never under-counted.
        ("gpt-50", Price(10.00, 1.00, 50.00)),
        ("llama-3-8b", Price(10.00, 1.00, 50.00)),
    ],
)
def test_price_rows(model: str, price: Price) -> None:
    assert price_for(model) == price


@pytest.mark.parametrize(
    ("usage", "dollars"),
    [
        (Usage(100_000, 0, 0), 0.20),
        (Usage(0, 0, 1_000_000), 10.00),
        (Usage(1_000, 800, 200), 0.00248),  # 200*2 + 800*0.1 + 200*10 per 1M
        # At the boundary the standard rate still applies ...
        (Usage(272_000, 0, 1_000), 0.554),
        # ... one token above it, input x2 and output x1.5 for the whole request.
        (Usage(272_001, 0, 1_000), 1.103004),
        (Usage(300_000, 100_000, 0), 0.82),  # 200000*2*2 + 100000*0.1*2
        # More cached than input (a server bug) is clamped: never a negative uncached count.
        (Usage(1_000, 5_000, 0), 0.0001),
    ],
)
def test_cost(usage: Usage, dollars: float) -> None:
    assert cost_usd(usage, SOL) == pytest.approx(dollars, rel=1e-12)


@pytest.mark.parametrize(
    "text", ["nan,0,0", "-1,0,0", "0,0,-0.5", "inf,0,0", "0,nan,0", "1,2", "1,2,3,4", "a,b,c", ""]
)
def test_override_prices_that_are_not_prices_are_refused(text: str) -> None:
    with pytest.raises(BridgeError, match="AUTOPILOT_CODEX_PRICES"):
        parse_override(text)


def test_override_prices_replace_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_override(" 1.5, 0.15 ,6") == Price(1.5, 0.15, 6.0)
    monkeypatch.setenv("AUTOPILOT_CODEX_PRICES", "0,0,0")
    assert price_for("gpt-6.2-astra") == Price(0.0, 0.0, 0.0)
    monkeypatch.setenv("AUTOPILOT_CODEX_PRICES", "nan,0,0")
    with pytest.raises(BridgeError):
        price_for("gpt-6.2-sol")


def test_the_worst_case_covers_the_retry_and_the_long_context_rate() -> None:
    # The estimate is a token a byte, plus one (the only true ceiling: a token is at least a
    # byte), and the retry adds its note's 2,200 (it was 3 characters a token and no note,
    # 0.024 and 1.200004 here).
    # 2999 characters estimate 3000 tokens: (3000*2 + 1000*10) + (5200*2 + 1000*10) per 1M.
    assert ceiling_usd("x" * 2_999, 1_000, SOL) == pytest.approx(0.0364)
    # 900000 characters estimate 900001 tokens, above 272K: (900001 + 902201) * 1 * 2 per 1M.
    assert ceiling_usd("x" * 900_000, 0, Price(1.0, 0.0, 1.0)) == pytest.approx(3.604404)


def test_the_token_estimate_is_a_token_a_byte_whatever_the_text() -> None:
    """A token is at least one byte, so a token a byte is the one count no text can pass:
    crafted ASCII no merge fits costs about a token a character, an emoji 4 a character."""
    assert estimate_tokens("") == 1
    assert estimate_tokens("a1!" * 1_000) == 3_001
    assert estimate_tokens("\U0001f600" * 1_000) == 4_001
    assert estimate_tokens("\udc80") == 4  # a lone surrogate, as `surrogatepass` writes it


def test_a_server_s_token_counts_are_read_as_positive_whole_numbers_only() -> None:
    """What a server reports of its usage is data: a negative, fractional or missing count is
    0 tokens, never a refund or a crash."""
    assert Usage.reported(1200, 200, 300) == Usage(1200, 200, 300)
    assert Usage.reported(-5, 2.5, None) == Usage(0, 0, 0)
    assert Usage.reported(0, "7", 40) == Usage(0, 0, 40)


@pytest.mark.parametrize("cap", [None, 3_000])
def test_the_worst_case_covers_the_corrective_retry_s_note(cap: int | None) -> None:
    """The retry sends the prompt again with a note naming what was wrong, up to 500
    characters of an error that may quote the answer (4 bytes each at worst): the worst case
    holds both attempts at a token a byte and the full output, the note included."""
    from autopilot_codex.manager.prompts import Prompt, corrective

    first = Prompt("instructions\n", "DATA " + "a1!" * 800)
    retry = corrective(first, "\U0001f600" * 5_000, cap)

    def billed(prompt: Prompt) -> float:
        # The server reads the instructions and the input apart: a separator between them.
        text = prompt.instructions + "\n" + prompt.text
        return cost_usd(Usage(len(text.encode("utf-8")), 0, 1_000), SOL)

    worst = ceiling_usd(first.instructions + first.text, 1_000, SOL)
    assert billed(first) + billed(retry) <= worst


def test_the_retry_note_bound_holds_the_longest_note() -> None:
    from autopilot_codex.manager.pricing import RETRY_NOTE_TOKENS
    from autopilot_codex.manager.prompts import NOTE_ERROR_CHARS, Prompt, corrective

    first = Prompt("i", "t")
    note = corrective(first, "\U0001f600" * NOTE_ERROR_CHARS).text[len(first.text) :]
    # The note, plus the separator between instructions and input.
    assert len(note.encode("utf-8")) + 1 <= RETRY_NOTE_TOKENS


def test_an_unseen_answer_is_charged_at_its_ceiling() -> None:
    """A timed-out attempt: its prompt a token a byte (`estimate_tokens`), the whole output."""
    text = "\u00e9t\u00e9 " * 10  # 6 bytes a word
    assert unseen(text, 4_000) == Usage(estimate_tokens(text), 0, 4_000)
    assert unseen(text, 4_000).input_tokens == 61
