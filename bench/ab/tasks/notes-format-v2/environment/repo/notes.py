"""Notes kept in one JSON file: {title: body}."""

from __future__ import annotations

import json
from pathlib import Path


def save(path: Path, notes: dict[str, str]) -> None:
    path.write_text(json.dumps(notes, indent=2, sort_keys=True))


def load(path: Path) -> dict[str, str]:
    data: dict[str, str] = json.loads(path.read_text())
    return data
