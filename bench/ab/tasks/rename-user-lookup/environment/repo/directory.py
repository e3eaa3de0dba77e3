"""The staff directory."""

from __future__ import annotations

from typing import TypedDict


class User(TypedDict):
    name: str
    team: str


USERS: list[User] = [
    {"name": "Ann Lee", "team": "billing"},
    {"name": "Bob Stone", "team": "search"},
    {"name": "Cy Young", "team": "billing"},
]


def get_user_by_name(name: str) -> User | None:
    wanted = " ".join(name.split()).casefold()
    for user in USERS:
        if user["name"].casefold() == wanted:
            return user
    return None
