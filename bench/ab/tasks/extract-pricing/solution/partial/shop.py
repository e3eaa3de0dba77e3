"""The shop's checkout: prices in integer cents."""

from __future__ import annotations

from typing import TypedDict

import pricing


class Item(TypedDict):
    sku: str
    price: int
    qty: int


def checkout(cart: list[Item], region: str, member: bool) -> dict[str, int]:
    subtotal = pricing.subtotal(cart)
    discount = pricing.discount(subtotal, member)
    taxable = subtotal - discount
    tax = pricing.tax(taxable, region)
    return {"subtotal": subtotal, "discount": discount, "tax": tax, "total": taxable + tax}
