"""Order lines and totals: subtotal, then the coupon, then tax, rounded once at the end."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Line:
    sku: str
    quantity: int
    unit_price: Decimal


def parse_line(text: str) -> Line:
    parts = [part.strip() for part in text.split(",")]
    if len(parts) != 3 or not parts[0]:
        raise ValueError(f"expected sku,quantity,unit_price: {text!r}")
    try:
        quantity, price = int(parts[1]), Decimal(parts[2])
    except (ValueError, InvalidOperation) as exc:
        raise ValueError(f"bad number in {text!r}") from exc
    if quantity < 1:
        raise ValueError(f"quantity below 1 in {text!r}")
    return Line(parts[0], quantity, price)


def subtotal(lines: Iterable[Line]) -> Decimal:
    return sum((line.quantity * line.unit_price for line in lines), Decimal(0))


def discounted(amount: Decimal, coupon: str | None) -> Decimal:
    if coupon is None:
        return amount
    if coupon == "SAVE10":
        return amount * Decimal("0.9")
    if coupon == "FLAT5":
        return max(amount - 5, Decimal(0))
    raise ValueError(f"unknown coupon {coupon!r}")


def total(lines: Iterable[Line], coupon: str | None, tax_rate: Decimal) -> Decimal:
    taxed = discounted(subtotal(lines), coupon) * (1 + tax_rate)
    return taxed.quantize(CENT, rounding=ROUND_HALF_UP)
