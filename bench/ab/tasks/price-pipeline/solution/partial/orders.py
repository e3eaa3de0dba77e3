"""Order lines and totals."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Line:
    sku: str
    quantity: int
    unit_price: Decimal


def parse_line(text: str) -> Line:
    sku, quantity, price = (part.strip() for part in text.split(","))
    return Line(sku, int(quantity), Decimal(price))
