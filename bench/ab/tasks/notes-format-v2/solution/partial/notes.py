"""Notes kept in one JSON file, version 2."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Note:
    body: str
    tags: list[str] = field(default_factory=list)


def save(path: Path, notes: dict[str, Note]) -> None:
    data = {"version": 2, "notes": {title: asdict(note) for title, note in notes.items()}}
    path.write_text(json.dumps(data, indent=2, sort_keys=True))


def load(path: Path) -> dict[str, Note]:
    data = json.loads(path.read_text())
    return {title: Note(**fields) for title, fields in data["notes"].items()}
