import json
from pathlib import Path

import pytest
from notes import Note, add_tag, load, upgrade_file


def test_reads_version_1(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"todo": "call Bob", "idea": "a tool"}))
    assert load(path) == {"todo": Note("call Bob", []), "idea": Note("a tool", [])}


def test_unknown_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"version": 3, "notes": {}}))
    with pytest.raises(ValueError):
        load(path)


def test_upgrade_rewrites_version_1(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"todo": "call Bob"}))
    upgrade_file(path)
    data = json.loads(path.read_text())
    assert data == {"version": 2, "notes": {"todo": {"body": "call Bob", "tags": []}}}
    assert [p.name for p in tmp_path.iterdir()] == ["notes.json"]


def test_upgrade_leaves_version_2_alone(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    text = '{"notes": {"a": {"body": "b", "tags": []}},   "version": 2}'
    path.write_text(text)
    upgrade_file(path)
    assert path.read_text() == text


def test_upgrade_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"todo": "call Bob"}))
    replaced: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        replaced.append(str(dst))
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    upgrade_file(path)
    assert replaced == [str(path)]


def test_add_tag(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text(json.dumps({"todo": "call Bob"}))
    add_tag(path, "todo", "phone")
    add_tag(path, "todo", "phone")
    assert load(path) == {"todo": Note("call Bob", ["phone"])}
    with pytest.raises(KeyError):
        add_tag(path, "nope", "x")
