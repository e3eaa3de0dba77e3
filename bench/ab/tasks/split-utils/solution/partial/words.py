"""Words that agree with their counts."""

from __future__ import annotations


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"1 {word}"
    if word.endswith(("s", "x", "ch", "sh")):
        return f"{count} {word}es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return f"{count} {word[:-1]}ies"
    return f"{count} {word}s"
