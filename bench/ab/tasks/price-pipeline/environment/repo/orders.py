"""Order lines and totals."""

from __future__ import annotations
