"""Validate submitted forms against per-field rules."""

from __future__ import annotations

import re
from collections.abc import Callable

EMAIL = re.compile(r"[^\s@]+@[^\s@.][^\s@]*\.[^\s@]+")
WHOLE = re.compile(r"-?\d+")

# A rule's check: (value, the rule's arguments) -> the message when it fails, else None.
Check = Callable[[str, list[str]], "str | None"]


def _min(value: str, args: list[str]) -> str | None:
    return None if len(value) >= int(args[0]) else f"must be at least {args[0]} characters"


def _max(value: str, args: list[str]) -> str | None:
    return None if len(value) <= int(args[0]) else f"must be at most {args[0]} characters"


def _email(value: str, args: list[str]) -> str | None:
    return None if EMAIL.fullmatch(value) else "must be an email address"


def _int(value: str, args: list[str]) -> str | None:
    return None if WHOLE.fullmatch(value) else "must be a whole number"


def _between(value: str, args: list[str]) -> str | None:
    low, high = int(args[0]), int(args[1])
    if not WHOLE.fullmatch(value) or low <= int(value) <= high:
        return None
    return f"must be between {low} and {high}"


def _one_of(value: str, args: list[str]) -> str | None:
    choices = args[0].split("|")
    return None if value in choices else f"must be one of {', '.join(choices)}"


CHECKS: dict[str, Check] = {
    "min": _min,
    "max": _max,
    "email": _email,
    "int": _int,
    "between": _between,
    "one_of": _one_of,
}


def _messages(value: str, field_rules: list[str]) -> list[str]:
    messages: list[str] = []
    for rule in field_rules:
        name, *args = rule.split(":")
        if name == "required":
            if not value.strip():
                messages.append("is required")
            continue
        if name not in CHECKS:
            raise ValueError(f"unknown rule {rule!r}")
        failed = CHECKS[name](value, args) if value.strip() else None
        if failed is not None:
            messages.append(failed)
    return messages


def validate(form: dict[str, str], rules: dict[str, list[str]]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name, field_rules in rules.items():
        messages = _messages(form.get(name, ""), field_rules)
        if messages:
            errors[name] = messages
    return errors
