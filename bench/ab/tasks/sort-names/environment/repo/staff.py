"""The staff list."""

from __future__ import annotations
