"""Invoice arithmetic in exact decimals; half cents round up (the billing rule)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def line_total(quantity: int, unit_price: str) -> Decimal:
    return (quantity * Decimal(unit_price)).quantize(CENT, rounding=ROUND_HALF_UP)


def invoice_total(lines: list[tuple[int, str]]) -> Decimal:
    return sum((line_total(q, p) for q, p in lines), Decimal("0.00"))


def format_eur(amount: Decimal) -> str:
    return f"{amount:,.2f} EUR"
