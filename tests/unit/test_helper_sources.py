"""The resident helper's view of its own code (`helper_sources`): every change the stamp of
the .py files would see is seen through the folder watch too, and what the stamp ignores
(compiled caches, other files) is ignored; any doubt reads the stamp."""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

import pytest

from autopilot_codex import helper_sources
from autopilot_codex.helper_sources import Sources, Watch

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "plugin" / "autopilot_codex"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "mod.py").write_text("A = 1\n")
    (root / "sub" / "deep.py").write_text("B = 2\n")
    (root / "data.json").write_text("{}")
    return root


def _both(root: Path) -> list[Sources]:
    """The watched view and the stamp alone, both started on the same code."""
    watched = Sources(str(root))
    stamped = Sources(str(root))
    stamped.watch = None
    return [watched, stamped]


@linux
def test_the_package_itself_is_watched() -> None:
    sources = Sources()
    assert sources.watch is not None
    assert not sources.changed()
    assert sources.stamp == helper_sources.read(helper_sources.PACKAGE)


@linux
def test_nothing_changed_reads_as_unchanged(package: Path) -> None:
    for sources in _both(package):
        assert sources.changed() is False


@linux
@pytest.mark.parametrize(
    "change",
    [
        "edit in place",
        "touch",
        "new module",
        "removed module",
        "renamed over",
        "new folder",
        "deep edit",
        "folder removed",
    ],
)
def test_a_code_change_is_seen_by_the_watch_and_the_stamp(package: Path, change: str) -> None:
    views = _both(package)
    assert views[0].watch is not None
    if change == "edit in place":
        (package / "mod.py").write_text("A = 3\n")
    elif change == "touch":
        os.utime(package / "mod.py", ns=(1, 1))
    elif change == "new module":
        (package / "new.py").write_text("")
    elif change == "removed module":
        (package / "mod.py").unlink()
    elif change == "renamed over":
        (package / "tmp.txt").write_text("A = 4\n")
        (package / "tmp.txt").rename(package / "mod.py")
    elif change == "new folder":
        (package / "more").mkdir()
        (package / "more" / "x.py").write_text("")
    elif change == "deep edit":
        (package / "sub" / "deep.py").write_text("B = 5\n")
    else:
        (package / "sub" / "deep.py").unlink()
        (package / "sub").rmdir()
    assert [v.changed() for v in views] == [True, True]


@linux
@pytest.mark.parametrize("change", ["compiled cache", "data file", "cache folder only"])
def test_what_the_stamp_ignores_the_watch_ignores(package: Path, change: str) -> None:
    views = _both(package)
    if change == "compiled cache":
        (package / "__pycache__").mkdir()
        (package / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"x")
    elif change == "data file":
        (package / "data.json").write_text('{"a": 1}')
    else:
        (package / "__pycache__").mkdir()
        (package / "__pycache__").rmdir()
    assert [v.changed() for v in views] == [False, False]


@linux
def test_a_new_tree_swapped_in_above_the_package_is_a_change(package: Path) -> None:
    """An upgrade that renames the plugin's folder away and puts a new one at its path:
    no watched folder moved, but the package's path now names another folder."""
    sources = Sources(str(package))
    plugin = package.parent
    plugin.rename(plugin.with_name("old"))
    new = plugin / "autopilot_codex"
    new.mkdir(parents=True)
    (new / "mod.py").write_text("A = 1\n")
    assert sources.changed() is True
    new.rename(plugin / "elsewhere")
    assert sources.changed() is True  # the package's path names nothing


@linux
def test_a_linked_file_is_not_watched_the_stamp_is_read(package: Path, tmp_path: Path) -> None:
    target = tmp_path / "target.py"
    target.write_text("C = 1\n")
    (package / "linked.py").symlink_to(target)
    sources = Sources(str(package))
    assert sources.watch is None
    assert sources.changed() is False
    target.write_text("C = 22\n")
    assert sources.changed() is True


def test_without_inotify_the_stamp_is_read(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    class NoInotify:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

    monkeypatch.setattr(ctypes, "CDLL", NoInotify)
    sources = Sources(str(package))
    assert sources.watch is None
    assert sources.changed() is False
    (package / "mod.py").write_text("A = 9\n")
    assert sources.changed() is True
    (package / "dangling.py").symlink_to(package / "nowhere.py")  # no stamp of its own
    assert Sources(str(package)).changed() is False
    import shutil

    shutil.rmtree(package)  # the whole package gone: its stamp is empty
    assert sources.changed() is True


@linux
def test_a_watch_that_cannot_start_leaves_the_stamp(
    package: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ctypes

    real = ctypes.CDLL

    class Refusing:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.libc = real(None, use_errno=True)

        def inotify_init1(self, flags: int) -> int:
            return -1 if refusing == ["init"] else int(self.libc.inotify_init1(flags))

        def inotify_add_watch(self, fd: int, path: bytes, mask: int) -> int:
            return -1 if refusing == ["add"] else int(self.libc.inotify_add_watch(fd, path, mask))

    monkeypatch.setattr(ctypes, "CDLL", Refusing)
    refusing: list[str] = []
    for step in ("init", "add"):
        refusing[:] = [step]
        assert Watch.start(str(package)) is None
    refusing.clear()
    assert Watch.start(str(tmp_path / "missing")) is None


def _event(mask: int, name: bytes = b"") -> bytes:
    padded = name + b"\0" * (16 - len(name) % 16) if name else b""
    return struct.pack("iIII", 1, mask, 0, len(padded)) + padded


def test_the_events_as_the_stamp_would_judge_them() -> None:
    judge = helper_sources._judge  # noqa: SLF001 - the events' reading, on crafted events
    assert judge(b"") is False
    assert judge(_event(0x2, b"notes.txt") + _event(0x2, b"mod.py")) is True
    assert judge(_event(0x100 | 0x40000000, b"__pycache__")) is False
    assert judge(_event(0x100 | 0x40000000, b"pkg")) is True
    assert judge(_event(0x8000)) is True  # the watch ended: its folder went away
    assert judge(_event(0x4000)) is None  # the queue overflowed: no telling


@linux
def test_an_overflowed_queue_reads_the_stamp(
    package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = Sources(str(package))
    (package / "data.json").write_text("[]")  # an event, so the read finds something
    monkeypatch.setattr(helper_sources, "_judge", lambda data: None)
    assert sources.changed() is False
    (package / "mod.py").write_text("A = 7\n")
    assert sources.changed() is True
