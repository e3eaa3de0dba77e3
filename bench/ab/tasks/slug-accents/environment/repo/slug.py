"""URL slugs from titles."""

from __future__ import annotations

import re


def slugify(title: str) -> str:
    text = title.lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    return text.strip("-")
