"""Import user accounts from CSV exports."""

from __future__ import annotations
