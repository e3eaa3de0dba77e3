"""The file primitives of the loop's store: whole-file reads, atomic writes, and the lock.
Kept apart from `store` so that module holds what the files mean, not how they are written.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from . import regular
from .errors import LockTimeout


def read_text(path: Path) -> str | None:
    try:
        return regular_text(path)
    except (OSError, UnicodeDecodeError):
        return None


def regular_text(path: Path) -> str:
    """As `Path.read_text` reads it (UTF-8, universal newlines), from a regular file only."""
    text = regular.read(path).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def atomic_write(
    path: Path, text: str, tmp_dir: Path | None = None, *, sync: bool = True, keep_mode: bool = False
) -> None:
    """Temp file (in `tmp_dir`, on the same file system), fsync, rename: readers see the old
    or the new file."""
    atomic_write_bytes(path, text.encode("utf-8"), tmp_dir, sync=sync, keep_mode=keep_mode)


def atomic_write_bytes(
    path: Path, data: bytes, tmp_dir: Path | None = None, *, sync: bool = True, keep_mode: bool = False
) -> None:
    """`atomic_write` for bytes: the whole file through a rename, so a link there is replaced
    and a reader never sees half of it. The file is private (0600) unless `keep_mode` keeps the
    mode of the file it replaces (a user's own settings); `sync=False` leaves out the fsync, for
    notes a crash of the machine may lose."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = tmp_dir or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    mode = 0o600
    if keep_mode:
        with contextlib.suppress(FileNotFoundError):
            mode = path.stat().st_mode & 0o777
    # Not `tempfile`: its import pulls in shutil and the compression modules, on the hot path.
    tmp = folder / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        tmp.chmod(mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def release(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def acquire(fd: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.002
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise LockTimeout(f"another autopilot-codex hook held the lock for over {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
