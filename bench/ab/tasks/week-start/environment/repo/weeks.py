"""Calendar weeks for the timesheet."""

from __future__ import annotations
