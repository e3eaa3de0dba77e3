"""A regular file, opened without waiting: the one way the bridge opens a file by name that
the implementer can put something else at (the loop's files in a state home an unguarded
implementer writes, the markers the gate reads, git's own files). A fifo there would hold
the read until a writer comes, a link to `/dev/zero` would never end it, the user's `stop`
among the readers. The type is taken from the opened file, so no swap after a look gets past
it. Nothing but `os`: the gate reads markers through it."""

from __future__ import annotations

import errno
import os
import stat

WAITLESS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def opened(path: str | os.PathLike[str], flags: int = 0, mode: int = 0o600) -> int:
    """`path` opened for reading (or with `flags` added), only when it is a regular file; an
    OSError for anything else."""
    fd = os.open(path, WAITLESS | flags, mode)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return fd


def read(path: str | os.PathLike[str]) -> bytes:
    with os.fdopen(opened(path), "rb") as handle:
        return handle.read()
