"""Roman numerals, 1 to 3999, written and read in canonical form only."""

from __future__ import annotations

SYMBOLS = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip


def to_roman(n: int) -> str:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 3999:
        raise ValueError(f"no Roman numeral for {n!r}")
    parts = []
    for value, symbol in SYMBOLS:
        count, n = divmod(n, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(text: str) -> int:
    upper = text.upper()
    total = 0
    rest = upper
    for value, symbol in SYMBOLS:
        while rest.startswith(symbol):
            total += value
            rest = rest[len(symbol):]
    # Greedy reading accepts non-canonical spellings (IIII); writing the number back and
    # comparing refuses them, and anything left unread.
    if rest or not 1 <= total <= 3999 or to_roman(total) != upper:
        raise ValueError(f"not a canonical Roman numeral: {text!r}")
    return total
