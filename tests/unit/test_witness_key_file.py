"""The key that seals the evidence: made once, the user's alone, never made afresh over a
damaged one, and the record of the loops that predate it taken exactly."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from autopilot_codex import witness_key
from autopilot_codex.errors import BridgeError
from autopilot_codex.witness import digest


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(witness_key, "_CACHE", {})


def test_the_key_is_made_once_and_is_the_user_s_alone(tmp_path: Path) -> None:
    key = witness_key.load(tmp_path)
    path = witness_key.key_path(tmp_path)
    assert path == tmp_path / "secret" / "witness.key"
    assert len(key.secret) == 32 and key.legacy == {}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert witness_key.load(tmp_path).secret == key.secret
    witness_key._CACHE.clear()
    assert witness_key.load(tmp_path).secret == key.secret
    assert [p.name for p in path.parent.iterdir()] == ["witness.key"]


def test_a_removed_key_file_is_not_served_from_memory(tmp_path: Path) -> None:
    first = witness_key.load(tmp_path)
    witness_key.key_path(tmp_path).unlink()
    assert witness_key.load(tmp_path).secret != first.secret


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"key": "zz"}),
        json.dumps({"key": "ab" * 31}),
        json.dumps({"key": "ab" * 33}),
        json.dumps({"legacy": {}}),
        json.dumps({"key": "ab" * 32, "legacy": []}),
        json.dumps(["ab" * 32]),
    ],
)
def test_a_damaged_key_is_refused_never_made_afresh(tmp_path: Path, text: str) -> None:
    path = witness_key.key_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(BridgeError, match="is damaged"):
        witness_key.load(tmp_path)
    assert path.read_text() == text


def _loop(home: Path, name: str, state: str | None, plan: str | None, witness: str | None) -> None:
    folder = home / "projects" / name
    folder.mkdir(parents=True)
    for file, text in (("state.json", state), ("plan.json", plan), ("witness.json", witness)):
        if text is not None:
            (folder / file).write_text(text)


def test_the_loops_that_predate_the_key_are_recorded_exactly(tmp_path: Path) -> None:
    _loop(tmp_path, "old", '{"n": 1}', '{"p": 1}', '{"states": []}')
    _loop(tmp_path, "planless", '{"n": 2}', None, None)
    _loop(tmp_path, "sealed", '{"n": 3}', None, '{"mac": "x"}')
    _loop(tmp_path, "empty", None, '{"p": 1}', None)
    (tmp_path / "projects" / "binary").mkdir()
    (tmp_path / "projects" / "binary" / "state.json").write_bytes(b"\xff\xfe")
    key = witness_key.load(tmp_path)
    assert key.legacy == {
        "old": {"state": digest('{"n": 1}'), "plan": digest('{"p": 1}')},
        "planless": {"state": digest('{"n": 2}'), "plan": ""},
    }
    witness_key._CACHE.clear()
    assert witness_key.load(tmp_path).legacy == key.legacy
    assert key.adoptable("old", '{"n": 1}') == key.legacy["old"]
    assert key.adoptable("old", '{"n": 1, "forged": true}') is None
    assert key.adoptable("sealed", '{"n": 3}') is None


def test_a_key_file_made_meanwhile_by_another_process_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = witness_key.key_path(tmp_path)
    theirs = json.dumps({"key": "cd" * 32, "legacy": {}})
    real_link = os.link

    def link_after_them(src: str | Path, dst: Path) -> None:
        dst.write_text(theirs)  # the other process's link landed first
        real_link(src, dst)

    monkeypatch.setattr(os, "link", link_after_them)
    assert witness_key.load(tmp_path).secret == bytes.fromhex("cd" * 32)
    assert path.read_text() == theirs
    assert [p.name for p in path.parent.iterdir()] == ["witness.key"]


def test_the_key_is_made_in_a_state_home_that_does_not_exist_yet(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    assert len(witness_key.load(home).secret) == 32
    assert witness_key.key_path(home).is_file()
