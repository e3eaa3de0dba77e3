"""Split a list into numbered pages (the first page is 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, per_page: int) -> int:
    return total // per_page


def page(items: Sequence[T], number: int, per_page: int) -> Sequence[T]:
    if number < 1 or number > page_count(len(items), per_page):
        raise IndexError(f"no page {number}")
    start = (number - 1) * per_page
    return items[start : start + per_page]
