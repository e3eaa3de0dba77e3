"""Convert values between units of the same kind."""

from __future__ import annotations


def convert(value: float, source: str, target: str) -> float:
    raise NotImplementedError
