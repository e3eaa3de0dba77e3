"""Stock per SKU, with reservations per order that are released or committed."""

from __future__ import annotations

from collections.abc import Iterable


class OutOfStock(ValueError):
    """A reservation that the available stock cannot meet."""


class Inventory:
    def __init__(self) -> None:
        self.stock: dict[str, int] = {}
        self.orders: dict[str, dict[str, int]] = {}

    def add(self, sku: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError(f"quantity must be positive, got {qty}")
        self.stock[sku] = self.stock.get(sku, 0) + qty

    def on_hand(self, sku: str) -> int:
        return self.stock.get(sku, 0)

    def reserved(self, sku: str) -> int:
        return sum(lines.get(sku, 0) for lines in self.orders.values())

    def available(self, sku: str) -> int:
        return self.on_hand(sku) - self.reserved(sku)

    def reserve(self, order_id: str, lines: Iterable[tuple[str, int]]) -> None:
        if order_id in self.orders:
            raise ValueError(f"order {order_id} already holds a reservation")
        wanted: dict[str, int] = {}
        for sku, qty in lines:
            wanted[sku] = wanted.get(sku, 0) + qty
        # Checked in full before anything is held: all or nothing.
        for sku, qty in wanted.items():
            if qty > self.available(sku):
                raise OutOfStock(f"not enough {sku}: {qty} wanted, {self.available(sku)} free")
        self.orders[order_id] = wanted

    def release(self, order_id: str) -> None:
        del self.orders[order_id]

    def commit(self, order_id: str) -> None:
        for sku, qty in self.orders.pop(order_id).items():
            self.stock[sku] -= qty
