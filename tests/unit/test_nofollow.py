"""The one way the supervisor opens a path under a folder the implementer can write: every
folder on the way and the file itself without following a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autopilot_codex import nofollow

KEPT = b"the test's own file\n"


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A work tree, and a folder outside it holding a file the test owns."""
    root, away = tmp_path / "root", tmp_path / "away"
    root.mkdir()
    away.mkdir()
    (away / "f").write_bytes(KEPT)
    return root, away


def test_writes_make_the_folders_and_land_in_the_real_place(places: tuple[Path, Path]) -> None:
    root, _ = places
    assert nofollow.create_new(root, "a/b/new.md", b"one") is True
    assert nofollow.create_new(root, "a/b/new.md", b"two") is False
    nofollow.replace(root, "a/b/new.md", b"three")
    with os.fdopen(nofollow.open_write(root, "./a/log", append=True), "ab") as log:
        log.write(b"x")
    with os.fdopen(nofollow.open_write(root, "a/log", append=True), "ab") as log:
        log.write(b"y")
    assert (root / "a/b/new.md").read_bytes() == b"three"
    assert (root / "a/log").read_bytes() == b"xy"
    assert sorted(p.name for p in (root / "a/b").iterdir()) == ["new.md"]  # no temp file left


def test_a_link_at_the_name_is_replaced_or_refused_never_written_through(
    places: tuple[Path, Path],
) -> None:
    root, away = places
    (root / "link").symlink_to(away / "f")
    assert nofollow.create_new(root, "link", b"new") is False
    with pytest.raises(nofollow.LinkRefused, match="refusing to follow .*link"):
        nofollow.open_write(root, "link")
    nofollow.replace(root, "link", b"real")
    assert (away / "f").read_bytes() == KEPT
    assert not (root / "link").is_symlink() and (root / "link").read_bytes() == b"real"


@pytest.mark.parametrize("call", ["create_new", "replace", "open_write"])
def test_a_folder_link_on_the_way_is_refused_with_one_line(
    places: tuple[Path, Path], call: str
) -> None:
    root, away = places
    (root / "sub").symlink_to(away, target_is_directory=True)
    with pytest.raises(nofollow.LinkRefused) as refused:
        if call == "create_new":
            nofollow.create_new(root, "sub/new", b"x")
        elif call == "replace":
            nofollow.replace(root, "sub/f", b"x")
        else:
            nofollow.open_write(root, "sub/f")
    assert "\n" not in str(refused.value) and str(root / "sub") in str(refused.value)
    assert sorted(p.name for p in away.iterdir()) == ["f"] and (away / "f").read_bytes() == KEPT


def test_a_file_where_a_folder_should_be_is_refused(places: tuple[Path, Path]) -> None:
    root, _ = places
    (root / "plain").write_text("x")
    with pytest.raises(nofollow.LinkRefused, match="not a real folder"):
        nofollow.replace(root, "plain/f", b"x")


def test_other_errors_are_raised_as_they_are(places: tuple[Path, Path]) -> None:
    root, _ = places
    (root / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        nofollow.open_write(root, "dir")
    with pytest.raises(IsADirectoryError):  # the rename onto a folder fails, the temp is gone
        nofollow.replace(root, "dir", b"x")
    assert list((root / "dir").iterdir()) == [] and [p.name for p in root.iterdir()] == ["dir"]
    with pytest.raises(FileNotFoundError):
        nofollow.readlink(root, "none/such")
    with pytest.raises(ValueError, match="plain relative"):
        nofollow.read(root, "../escape")
    with pytest.raises(ValueError, match="plain relative"):
        nofollow.read(root, "/etc/passwd")


def test_reads_show_each_kind_inside_the_root(places: tuple[Path, Path]) -> None:
    root, away = places
    (root / "d").mkdir()
    (root / "d/file").write_bytes(b"bytes")
    (root / "d/link").symlink_to(away / "f")
    (root / "via").symlink_to(away, target_is_directory=True)
    (root / "plain").write_text("x")
    os.mkfifo(root / "d/fifo")
    assert nofollow.read(root, "d/file") == ("file", b"bytes")
    assert nofollow.read(root, "d/link") == ("link", os.fsencode(away / "f"))
    assert nofollow.read(root, "via/f") == ("link", os.fsencode(f"via -> {away}"))
    assert nofollow.read(root, "d") == ("directory", None)
    assert nofollow.read(root, "d/fifo") == ("special", None)
    assert nofollow.read(root, "d/none") == ("missing", None)
    assert nofollow.read(root, "none/f") == ("missing", None)
    assert nofollow.read(root, "plain/f") == ("unreadable", None)  # a file on the way
    assert nofollow.readlink(root, "d/link") == str(away / "f")
    with nofollow.reading(root, "d/file") as handle:
        assert handle.read() == b"bytes"
    with pytest.raises(nofollow.LinkRefused):
        nofollow.reading(root, "via/f").__enter__()


def test_a_read_that_fails_otherwise_says_unreadable(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = places
    (root / "f").write_bytes(b"x")
    real = os.open

    def denied(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if path == "f":
            raise PermissionError(13, "denied")
        return real(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", denied)
    assert nofollow.read(root, "f") == ("unreadable", None)
