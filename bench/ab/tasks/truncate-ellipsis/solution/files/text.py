"""Text helpers for the list view."""

from __future__ import annotations

from collections.abc import Iterable

ELLIPSIS = "…"


def truncate(title: str, limit: int) -> str:
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if len(title) <= limit:
        return title
    # The ellipsis counts towards the limit (the answer to the open question).
    return title[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def truncate_all(titles: Iterable[str], limit: int) -> list[str]:
    return [truncate(title, limit) for title in titles]
