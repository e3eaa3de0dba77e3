"""Files under an ignore rule that were made or changed since the loop started: named.

An ignore rule hides a file from every git view, and the implementer can write one (a
`.gitignore` that ignores itself and its folder shows nothing at all), or simply write into a
folder that was ignored before it started (`build/`, `node_modules/`). So when the loop
starts, the stat of every ignored file is recorded (no content is read: a large dependency
folder costs a listing and a stat per file), and each review names the ignored files whose
stat differs from that record, or that are new, with their size and sha256. The stat
includes the ctime, which no write can keep, so an edit cannot pass as unchanged.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from .runner import run_bytes

# Ignored files named in one review; the rest are counted.
NAMED_MAX = 200
Stat = tuple[int, int, int, int, int]  # mode, size, mtime_ns, ctime_ns, inode
_LIST = ("ls-files", "--others", "--ignored", "--exclude-per-directory=.gitignore", "-z")


def listing(worktree: Path) -> list[str]:
    """Every ignored file (the in-tree .gitignore files' rules only), a nested repository
    left out (its files are nested.py's)."""
    out = run_bytes(worktree, *_LIST)
    return [os.fsdecode(n) for n in out.split(b"\0") if n and not n.endswith(b"/")]


def stats(worktree: Path) -> dict[str, Stat]:
    # Joined as bytes: a Path per file costs more than its lstat (a virtualenv holds 10,000).
    base = os.fsencode(worktree) + b"/"
    found: dict[str, Stat] = {}
    for name in listing(worktree):
        try:
            info = os.lstat(base + os.fsencode(name))
        except OSError:
            continue
        found[name] = _stat(info)
    return found


def _stat(info: os.stat_result) -> Stat:
    return (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def changes(
    worktree: Path, baseline: Mapping[str, tuple[int, ...]], hidden: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """(name, line) per ignored file new or changed since `baseline`, and per one gone; past
    NAMED_MAX, one line that counts the rest (its name "")."""
    now = stats(worktree)
    lines: list[tuple[str, str]] = []
    for name in sorted(set(now) | set(baseline)):
        before, after = baseline.get(name), now.get(name)
        if before == after or hidden(name):
            continue
        if after is None:
            lines.append((name, f"# - {name} (removed)"))
        else:
            what = "new" if before is None else "changed"
            lines.append((name, f"# - {name} ({what}, {_describe(worktree / name, after)})"))
    if len(lines) > NAMED_MAX:
        lines = [*lines[:NAMED_MAX], ("", f"# ... and {len(lines) - NAMED_MAX} more")]
    return lines


def _describe(path: Path, info: Stat) -> str:
    mode = info[0]
    if stat.S_ISLNK(mode):
        try:
            return f"a link to {os.fsdecode(path.readlink())!r}"
        except OSError as exc:
            return f"unreadable {exc.errno}"
    digest = hashlib.sha256()
    try:
        # git lists regular files and links only; one swapped for a fifo since must not block.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            while chunk := handle.read(1024 * 1024):
                digest.update(chunk)
    except OSError as exc:
        return f"unreadable {exc.errno}"
    return f"{info[1]} bytes, sha256 {digest.hexdigest()}"
