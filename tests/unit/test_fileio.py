"""The one atomic write: whole or not at all, private unless it keeps a user's own mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.fileio import atomic_write, atomic_write_bytes


def test_write_atomic_keeps_the_mode(tmp_path: Path) -> None:
    # A user's own settings file (Codex's config.toml, Claude Code's settings) keeps its mode.
    path = tmp_path / "config.toml"
    path.write_text("a = 1\n")
    path.chmod(0o640)
    atomic_write(path, "a = 2\n", keep_mode=True)
    assert path.read_text() == "a = 2\n"
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["config.toml"]


def test_a_new_file_and_a_replaced_one_are_private_unless_the_mode_is_kept(tmp_path: Path) -> None:
    kept = tmp_path / "new" / "kept.json"
    atomic_write(kept, "{}\n", keep_mode=True)  # nothing to keep the mode of
    assert kept.stat().st_mode & 0o777 == 0o600
    shared = tmp_path / "shared"
    shared.write_text("old")
    shared.chmod(0o644)
    atomic_write_bytes(shared, b"new", sync=False)
    assert shared.read_bytes() == b"new"
    assert shared.stat().st_mode & 0o777 == 0o600


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")

    def refuse(src: object, dst: object) -> None:
        raise OSError("no room")

    monkeypatch.setattr("os.replace", refuse)
    with pytest.raises(OSError, match="no room"):
        atomic_write(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
