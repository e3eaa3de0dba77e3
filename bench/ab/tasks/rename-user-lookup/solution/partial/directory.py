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
BY_NAME = {user["name"].lower(): user for user in USERS}


def find_user(name: str) -> User | None:
    return BY_NAME.get(name.strip().lower())


def get_user_by_name(name: str) -> User | None:
    """Deprecated: the old name of `find_user`."""
    warnings.warn("get_user_by_name is deprecated; use find_user", DeprecationWarning, stacklevel=2)
    return find_user(name)
