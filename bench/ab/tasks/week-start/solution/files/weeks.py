"""Calendar weeks for the timesheet. Weeks run Sunday to Saturday (the US convention)."""

from __future__ import annotations

from datetime import date, timedelta


def week_start(day: date) -> date:
    # weekday() counts from Monday = 0; Sunday is 6, and starts its own week.
    return day - timedelta(days=(day.weekday() + 1) % 7)


def week_days(day: date) -> list[date]:
    first = week_start(day)
    return [first + timedelta(days=n) for n in range(7)]


def same_week(a: date, b: date) -> bool:
    return week_start(a) == week_start(b)


def group_by_week(days: list[date]) -> dict[date, list[date]]:
    groups: dict[date, list[date]] = {}
    for day in sorted(days):
        groups.setdefault(week_start(day), []).append(day)
    return groups
