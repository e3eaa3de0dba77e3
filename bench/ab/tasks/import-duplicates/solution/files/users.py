"""Import user accounts from CSV exports. The first row for an email is kept; later rows with
the same email are skipped (the product owner's rule: the first export row is authoritative)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

ROLES = ("admin", "member")


@dataclass(frozen=True)
class User:
    email: str
    name: str
    role: str


def import_users(text: str) -> tuple[dict[str, User], list[int]]:
    users: dict[str, User] = {}
    skipped: list[int] = []
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        email = (row.get("email") or "").strip().lower()
        role = (row.get("role") or "").strip()
        if not email or role not in ROLES or email in users:
            skipped.append(line)
            continue
        users[email] = User(email, (row.get("name") or "").strip(), role)
    return users, skipped
