"""Stock per SKU."""

from __future__ import annotations


class Inventory:
    def __init__(self) -> None:
        self.stock: dict[str, int] = {}
