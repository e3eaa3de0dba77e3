"""Assorted helpers, re-exported from the modules that now hold them (kept for old imports)."""

from __future__ import annotations

from sizes import human_size
from values import clamp, parse_bool
from words import plural

__all__ = ["clamp", "human_size", "parse_bool", "plural"]
