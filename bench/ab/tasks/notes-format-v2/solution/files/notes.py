"""Notes kept in one JSON file. Version 2: {"version": 2, "notes": {title: {body, tags}}};
version 1 files ({title: body}) are still read, and upgraded on request."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

VERSION = 2


@dataclass
class Note:
    body: str
    tags: list[str] = field(default_factory=list)


def _dump(notes: dict[str, Note]) -> str:
    data = {"version": VERSION, "notes": {title: asdict(note) for title, note in notes.items()}}
    return json.dumps(data, indent=2, sort_keys=True)


def _write_atomic(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as file:
            file.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _parse(data: Any) -> tuple[int, dict[str, Note]]:
    if "version" not in data:
        return 1, {title: Note(body) for title, body in data.items()}
    if data["version"] != VERSION:
        raise ValueError(f"unknown notes file version {data['version']!r}")
    notes = {title: Note(f["body"], list(f["tags"])) for title, f in data["notes"].items()}
    return VERSION, notes


def save(path: Path, notes: dict[str, Note]) -> None:
    _write_atomic(path, _dump(notes))


def load(path: Path) -> dict[str, Note]:
    return _parse(json.loads(path.read_text()))[1]


def upgrade_file(path: Path) -> None:
    version, notes = _parse(json.loads(path.read_text()))
    if version != VERSION:
        _write_atomic(path, _dump(notes))


def add_tag(path: Path, title: str, tag: str) -> None:
    notes = load(path)
    note = notes[title]
    if tag not in note.tags:
        note.tags.append(tag)
    save(path, notes)
