"""Import user accounts from CSV exports."""

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
    lines: dict[str, int] = {}
    skipped: list[int] = []
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        email = (row.get("email") or "").strip().lower()
        role = (row.get("role") or "").strip()
        if not email or role not in ROLES:
            skipped.append(line)
            continue
        if email in lines:
            skipped.append(lines[email])
        users[email] = User(email, (row.get("name") or "").strip(), role)
        lines[email] = line
    return users, sorted(skipped)
