"""Byte counts for people."""

from __future__ import annotations

UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def human_size(size: int) -> str:
    if size < 0:
        raise ValueError(f"negative size {size}")
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in UNITS[1:]:
        value /= 1024
        if value < 1024 or unit == UNITS[-1]:
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
