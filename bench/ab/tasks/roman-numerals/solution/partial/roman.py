"""Roman numerals."""

from __future__ import annotations

SYMBOLS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip


def to_roman(n: int) -> str:
    parts = []
    for value, symbol in SYMBOLS:
        count, n = divmod(n, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(text: str) -> int:
    total = 0
    for value, symbol in SYMBOLS:
        while text.upper().startswith(symbol):
            total += value
            text = text[len(symbol):]
    return total
