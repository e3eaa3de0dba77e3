"""Merge closed intervals (start, end)."""

from __future__ import annotations

Interval = tuple[int, int]


def merge(intervals: list[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    # Sorted by start, an interval can only touch or overlap the last merged one; its end may
    # lie inside that one (nested), so the merged end is the larger of the two.
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
