"""The staff directory."""

from __future__ import annotations

import warnings
from typing import TypedDict


class User(TypedDict):
    name: str
    team: str


USERS: list[User] = [
    {"name": "Ann Lee", "team": "billing"},
    {"name": "Bob Stone", "team": "search"},
    {"name": "Cy Young", "team": "billing"},
]


def find_user(name: str) -> User | None:
    wanted = " ".join(name.split()).casefold()
    for user in USERS:
        if user["name"].casefold() == wanted:
            return user
    return None


def get_user_by_name(name: str) -> User | None:
    """Deprecated: the old name of `find_user`, kept for the teams that still import it."""
    warnings.warn(
        "get_user_by_name is deprecated; use find_user", DeprecationWarning, stacklevel=2
    )
    return find_user(name)
