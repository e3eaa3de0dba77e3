"""The staff list, ordered by last name, then first name (the office's rule)."""

from __future__ import annotations


def _key(name: str) -> tuple[str, str]:
    *first, last = name.casefold().split()
    return last, " ".join(first)


def sort_people(names: list[str]) -> list[str]:
    return sorted(names, key=_key)


def initials(name: str) -> str:
    return "".join(word[0].upper() for word in name.split())


def directory(names: list[str]) -> str:
    return "\n".join(f"{initials(name)}  {name}" for name in sort_people(names))
