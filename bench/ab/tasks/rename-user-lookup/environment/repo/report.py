"""One-line descriptions of staff members."""

from __future__ import annotations

from directory import get_user_by_name


def describe(name: str) -> str:
    user = get_user_by_name(name)
    if user is None:
        return f"{name}: not in the directory"
    return f"{user['name']} ({user['team']})"
