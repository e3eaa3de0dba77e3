"""Text helpers for the list view."""

from __future__ import annotations
