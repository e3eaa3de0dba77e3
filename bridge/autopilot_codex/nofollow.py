"""Files under a folder the implementer can write, opened without following a link.

The driver writes into the work tree (the handoff, the knowledge base, the round logs, the
exclude file) and the review reads from it, and a round can put a link anywhere there: at the
file, or at a folder on the way (`.autopilot-codex/handoffs -> ~/elsewhere`). So every such
path is walked one component at a time from a folder the caller trusts (`root`), each folder
opened with O_NOFOLLOW|O_DIRECTORY relative to the one before, and the file itself opened,
renamed or read relative to its folder with O_NOFOLLOW. A link on the way is never followed:
the write stops with one line naming it, the read says "link".

POSIX only (`dir_fd` and O_NOFOLLOW), as is the driver.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from . import regular
from .errors import BridgeError

# getattr: the module stays importable where these flags are missing (the calls are POSIX).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_ISDIR = getattr(os, "O_DIRECTORY", 0)
_DIR = os.O_RDONLY | _ISDIR | _NOFOLLOW
_REFUSED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)


class LinkRefused(BridgeError):
    """A link (or a non-folder) where the supervisor expected a real folder or file."""


def _parts(rel: str) -> list[str]:
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise ValueError(f"not a plain relative path: {rel!r}")
    return [p for p in parts if p != "."]


def _refuse(root: Path, rel: str, exc: OSError) -> LinkRefused:
    return LinkRefused(
        f"refusing to follow {root / rel}: it is a link or not a real folder "
        f"({exc.strerror}); remove it and run again"
    )


@contextlib.contextmanager
def folder(root: Path, rel: str, *, create: bool) -> Iterator[int]:
    """An fd of the real folder `root/rel` (made when missing and `create`); `rel` "." is root."""
    fd = os.open(root, os.O_RDONLY | _ISDIR)
    walked = ""
    try:
        for part in [] if rel in ("", ".") else _parts(rel):
            walked = f"{walked}/{part}" if walked else part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _REFUSED:
                    raise _refuse(root, walked, exc) from exc
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _split(rel: str) -> tuple[str, str]:
    parts = _parts(rel)
    return "/".join(parts[:-1]) or ".", parts[-1]


def create_new(root: Path, rel: str, data: bytes) -> bool:
    """Write a new file; False when the name is taken (by a file or a link: never followed)."""
    where, name = _split(rel)
    with folder(root, where, create=True) as dfd:
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=dfd)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    return True


def replace(root: Path, rel: str, data: bytes) -> None:
    """The whole file through a temp file in the same real folder and a rename: a link at the
    name itself is replaced, never written through."""
    where, name = _split(rel)
    with folder(root, where, create=True) as dfd:
        tmp = f".{name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dfd)
            raise


def open_write(root: Path, rel: str, *, append: bool = False) -> int:
    """An fd to write `root/rel` (created when missing), truncated unless `append`; a link
    there or on the way is refused with one line."""
    where, name = _split(rel)
    flags = os.O_WRONLY | os.O_CREAT | _NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    with folder(root, where, create=True) as dfd:
        try:
            return os.open(name, flags, 0o644, dir_fd=dfd)
        except OSError as exc:
            if exc.errno in _REFUSED:
                raise _refuse(root, rel, exc) from exc
            raise


def _opened(dfd: int, name: str) -> BinaryIO:
    # Non-blocking: a fifo put where a file was must not hang the reader.
    return os.fdopen(
        os.open(name, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd), "rb"
    )


@contextlib.contextmanager
def reading(root: Path, rel: str) -> Iterator[BinaryIO]:
    """`root/rel` open for reading, found inside `root` without following a link."""
    where, name = _split(rel)
    with folder(root, where, create=False) as dfd, _opened(dfd, name) as handle:
        yield handle


def sha256(root: Path, rel: str) -> str:
    """The file's sha256 read without following a link, or "unreadable <errno|link>" (the file
    swapped for a link or removed since its caller looked)."""
    digest = hashlib.sha256()
    try:
        with reading(root, rel) as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
    except (OSError, LinkRefused) as exc:
        return f"unreadable {getattr(exc, 'errno', 'link')}"
    return digest.hexdigest()


def small(path: Path, limit: int, *, follow: bool = False) -> bytes | None:
    """The bytes of `path` when it is a regular file of at most `limit` bytes; None for
    anything else (missing, a link at the name unless `follow`, a fifo, a device, a folder, a
    file too large). For the few files of git's own the bridge reads by name (`HEAD`, the
    stash's log, a `.git` file): the implementer can put a fifo there, whose read waits for a
    writer for ever, or a link to `/dev/zero`, whose read never ends. The open does not wait
    and the type is taken from the opened file, so no swap after a look gets past it."""
    try:
        fd = regular.opened(path, 0 if follow else _NOFOLLOW)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


def lstat(root: Path, rel: str) -> os.stat_result:
    """`root/rel`'s own stat (a link's, not its target's), found inside `root`."""
    where, name = _split(rel)
    with folder(root, where, create=False) as dfd:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)


def readlink(root: Path, rel: str) -> str:
    """The target of the link `root/rel`, found inside `root`."""
    where, name = _split(rel)
    with folder(root, where, create=False) as dfd:
        return os.readlink(name, dir_fd=dfd)


def read(root: Path, rel: str) -> tuple[str, bytes | None]:
    """(kind, content) of `root/rel` as it lies inside `root`: "file" with its bytes, "link"
    with its target (a link on the way: "link" with that folder's target), "directory",
    "special", "missing" or "unreadable". Nothing outside `root` is ever opened."""
    where, name = _split(rel)
    try:
        with folder(root, where, create=False) as dfd:
            info = os.stat(name, dir_fd=dfd, follow_symlinks=False)  # lstat, with the fd held
            if stat.S_ISLNK(info.st_mode):
                return "link", os.fsencode(os.readlink(name, dir_fd=dfd))
            if not stat.S_ISREG(info.st_mode):
                return ("directory" if stat.S_ISDIR(info.st_mode) else "special"), None
            with _opened(dfd, name) as handle:
                return "file", handle.read()
    except LinkRefused:
        return _on_the_way(root, where)
    except FileNotFoundError:
        return "missing", None
    except OSError:
        return "unreadable", None


def _on_the_way(root: Path, where: str) -> tuple[str, bytes | None]:
    """The first link among the folders of `where`: shown as a link, its target as text."""
    walked = root
    for part in _parts(where):
        walked = walked / part
        if walked.is_symlink():
            return "link", os.fsencode(f"{walked.relative_to(root)} -> {walked.readlink()}")
    return "unreadable", None
