"""Price arithmetic in integer cents: subtotal, discount, tax (each rounded down)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TAX_PERCENT = {"DE": 19, "FR": 20, "US": 0}
MEMBER_PERCENT = 5
BIG_ORDER = 10000  # cents: an order of at least this much gets BIG_ORDER_OFF off
BIG_ORDER_OFF = 1000


def subtotal(cart: Iterable[Mapping[str, Any]]) -> int:
    return sum(item["price"] * item["qty"] for item in cart)


def discount(subtotal: int, member: bool) -> int:
    off = subtotal * MEMBER_PERCENT // 100 if member else 0
    if subtotal >= BIG_ORDER:
        off += BIG_ORDER_OFF
    return off


def tax(amount: int, region: str) -> int:
    if region not in TAX_PERCENT:
        raise KeyError(f"unknown region {region}")
    return round(amount * TAX_PERCENT[region] / 100)
