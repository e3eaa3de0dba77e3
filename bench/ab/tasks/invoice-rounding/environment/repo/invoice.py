"""Invoice arithmetic in exact decimals."""

from __future__ import annotations
