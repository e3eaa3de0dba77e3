"""Read dates typed by people."""

from __future__ import annotations

from datetime import date


def parse_date(text: str, today: date) -> date:
    raise NotImplementedError
