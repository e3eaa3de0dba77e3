"""Validate submitted forms against per-field rules."""

from __future__ import annotations


def validate(form: dict[str, str], rules: dict[str, list[str]]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name, field_rules in rules.items():
        value = form.get(name, "").strip()
        if "required" in field_rules and not value:
            errors.setdefault(name, []).append("is required")
    return errors
