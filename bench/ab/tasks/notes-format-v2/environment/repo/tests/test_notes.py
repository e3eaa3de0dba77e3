import json
from pathlib import Path

from notes import Note, load, save


def test_save_writes_version_2(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    save(path, {"shopping": Note("milk", ["home"])})
    data = json.loads(path.read_text())
    assert data == {"version": 2, "notes": {"shopping": {"body": "milk", "tags": ["home"]}}}


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    save(path, {"a": Note("x")})
    assert load(path) == {"a": Note("x", [])}
