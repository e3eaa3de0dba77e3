"""The plugin's code as the resident helper loaded it: a changed file means an upgrade or an
edit in place, and the helper must not answer with the old code (`helper_server`).

Every hook the helper takes asks first. Reading the stamp again (a stat of each of the ~230
files) cost each helped hook about 1.3 ms of CPU; on Linux the helper watches its folders
instead (inotify, through ctypes: the helper's own import, never a hook's), and a hook's
question is one stat of the package folder (an ancestor swapped for a new tree) and one read
that finds no event. Any doubt (no inotify, a folder it cannot watch, a linked file whose
target it would not see, an overflowed queue) reads the stamp as before.
"""

from __future__ import annotations

import os
import struct

# inotify(7): what changes a watched folder's code, and how the kernel says a watch ended.
_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_WATCHED = (_IN_MODIFY | _IN_ATTRIB | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE) | (
    _IN_DELETE_SELF | _IN_MOVE_SELF
)
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_EVENT = struct.Struct("iIII")
PACKAGE = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120


class Sources:
    """The stamp of the code under `root` (every .py: path, mtime, size), and a watch of its
    folders where the system has one."""

    def __init__(self, root: str = PACKAGE) -> None:
        self.root = root
        self.watch = Watch.start(root)
        self.stamp = read(root)

    def changed(self) -> bool:
        said = self.watch.changed() if self.watch is not None else None
        return read(self.root) != self.stamp if said is None else said


def read(root: str) -> tuple[tuple[str, int, int], ...]:
    found: list[tuple[str, int, int]] = []
    for entry in _code(root):
        try:
            info = entry.stat()
        except OSError:
            continue
        found.append((entry.path, info.st_mtime_ns, info.st_size))
    return tuple(sorted(found))


def _code(root: str) -> list[os.DirEntry[str]]:
    """The .py entries under `root`, __pycache__ left out."""
    found: list[os.DirEntry[str]] = []
    for _, files in _folders(root):
        found += [e for e in files if e.name.endswith(".py")]
    return found


def _folders(root: str) -> list[tuple[str, list[os.DirEntry[str]]]]:
    """Each folder under `root` (links not followed) with its entries that are not folders."""
    found: list[tuple[str, list[os.DirEntry[str]]]] = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        files = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(entry.path)
            else:
                files.append(entry)
        found.append((folder, files))
    return found


class Watch:
    """An inotify descriptor on every folder of the code, made before the helper forks its
    children: they share it, and an event one of them reads ends the helper anyway."""

    def __init__(self, fd: int, root: str, inode: tuple[int, int]) -> None:
        self.fd = fd
        self.root = root
        self.inode = inode

    @classmethod
    def start(cls, root: str) -> Watch | None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            init, add = libc.inotify_init1, libc.inotify_add_watch
        except (ImportError, OSError, AttributeError):
            return None  # not Linux: the stamp is read again
        fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        try:
            info = os.stat(root)
            for folder, files in _folders(root):
                # A linked file changes where no watch of ours sees it.
                if any(e.is_symlink() for e in files) or add(fd, os.fsencode(folder), _WATCHED) < 0:
                    os.close(fd)
                    return None
        except OSError:
            os.close(fd)
            return None
        return cls(fd, root, (info.st_dev, info.st_ino))

    def changed(self) -> bool | None:
        """True: the code changed; False: it did not; None: no telling (read the stamp)."""
        try:
            info = os.stat(self.root)
        except OSError:
            return True
        if (info.st_dev, info.st_ino) != self.inode:
            return True  # a new tree where the old one was
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return False
            verdict = _judge(data)
            if verdict is not False:
                return verdict


def _judge(data: bytes) -> bool | None:
    """Whether these events change the code (the stamp's view: .py files and folders)."""
    at = 0
    while at + _EVENT.size <= len(data):
        _, mask, _, size = _EVENT.unpack_from(data, at)
        name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
        at += _EVENT.size + size
        if mask & _IN_Q_OVERFLOW:
            return None
        if mask & _GONE:
            return True
        if mask & _IN_ISDIR:
            if name != b"__pycache__":
                return True
        elif name.endswith(b".py"):
            return True
    return False
