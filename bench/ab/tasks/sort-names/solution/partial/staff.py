"""The staff list."""

from __future__ import annotations


def sort_people(names: list[str]) -> list[str]:
    return sorted(names, key=str.casefold)


def initials(name: str) -> str:
    return "".join(word[0].upper() for word in name.split())


def directory(names: list[str]) -> str:
    return "\n".join(f"{initials(name)}  {name}" for name in sort_people(names))
