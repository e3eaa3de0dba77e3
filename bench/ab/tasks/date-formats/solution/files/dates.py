"""Read dates typed by people: ISO, day-first with slashes, compact, with a month name, or
relative to today."""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

RELATIVE = {"yesterday": -1, "today": 0, "tomorrow": 1}
MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}

# Each form: a pattern and the order of its (year, month, day) groups by name.
FORMS = (
    re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"),
    re.compile(r"(?P<d>\d{1,2})/(?P<m>\d{1,2})/(?P<y>\d{4})"),
    re.compile(r"(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})"),
    re.compile(r"(?P<name>[a-z]+) (?P<d>\d{1,2}),? (?P<y>\d{4})"),
    re.compile(r"(?P<d>\d{1,2}) (?P<name>[a-z]+) (?P<y>\d{4})"),
)


def _from(match: re.Match[str]) -> date:
    parts = match.groupdict()
    month = MONTHS.get(parts["name"], 0) if "name" in parts else int(parts["m"])
    # date() refuses month 0 (an unknown name) and impossible days with ValueError.
    return date(int(parts["y"]), month, int(parts["d"]))


def parse_date(text: str, today: date) -> date:
    cleaned = " ".join(text.split()).lower()
    if cleaned in RELATIVE:
        return today + timedelta(days=RELATIVE[cleaned])
    for form in FORMS:
        match = form.fullmatch(cleaned)
        if match:
            return _from(match)
    raise ValueError(f"not a date: {text!r}")
