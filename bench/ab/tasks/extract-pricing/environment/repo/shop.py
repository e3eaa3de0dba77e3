"""The shop's checkout: prices in integer cents."""

from __future__ import annotations

from typing import TypedDict


class Item(TypedDict):
    sku: str
    price: int
    qty: int


def checkout(cart: list[Item], region: str, member: bool) -> dict[str, int]:
    subtotal = 0
    for item in cart:
        subtotal += item["price"] * item["qty"]
    discount = 0
    if member:
        discount = subtotal * 5 // 100
    if subtotal >= 10000:
        discount += 1000
    rates = {"DE": 19, "FR": 20, "US": 0}
    if region not in rates:
        raise KeyError(f"unknown region {region}")
    taxable = subtotal - discount
    tax = taxable * rates[region] // 100
    return {"subtotal": subtotal, "discount": discount, "tax": tax, "total": taxable + tax}
