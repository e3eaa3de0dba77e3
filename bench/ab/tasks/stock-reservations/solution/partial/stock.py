"""Stock per SKU."""

from __future__ import annotations


class Inventory:
    def __init__(self) -> None:
        self.stock: dict[str, int] = {}

    def add(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError(f"quantity must be positive, got {qty}")
        self.stock[sku] = self.stock.get(sku, 0) + qty

    def available(self, sku: str) -> int:
        return self.stock.get(sku, 0)
