"""One-line descriptions of staff members."""

from __future__ import annotations

from directory import find_user


def describe(name: str) -> str:
    user = find_user(name)
    if user is None:
        return f"{name}: not in the directory"
    return f"{user['name']} ({user['team']})"
