"""Roman numerals."""

from __future__ import annotations


def to_roman(n: int) -> str:
    raise NotImplementedError


def from_roman(text: str) -> int:
    raise NotImplementedError
