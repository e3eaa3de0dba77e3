"""Validate submitted forms against per-field rules."""

from __future__ import annotations


def validate(form: dict[str, str], rules: dict[str, list[str]]) -> dict[str, list[str]]:
    raise NotImplementedError
