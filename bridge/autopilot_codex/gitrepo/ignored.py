"""Files under an ignore rule that were made or changed since the loop started: named.

An ignore rule hides a file from every git view, and the implementer can write one (a
`.gitignore` that ignores itself and its folder shows nothing at all), or simply write into a
folder that was ignored before it started (`build/`, `node_modules/`). So when the loop
starts, every ignored file's stat and sha256 (a link: its target) are recorded, and each
review names the ignored files that are new, gone, or whose content differs from that record,
with their size and sha256. A file whose stat is unchanged is not read again (the stat holds
the ctime, which no write can keep); one whose stat changed but whose bytes did not (a cache
rewritten the same) is not named, so running the tests does not make every review new.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .nested import walk
from .runner import run_bytes

# Ignored files named in one review; the rest are counted.
NAMED_MAX = 200
RECORD_MAX = 256 * 1024
# mode, size, mtime_ns, ctime_ns, inode; a record adds the content's digest.
Stat = tuple[int, int, int, int, int]
_LIST = ("ls-files", "--others", "--ignored", "--exclude-per-directory=.gitignore", "-z")


def listing(worktree: Path) -> list[str]:
    """Every ignored file (the in-tree .gitignore files' rules only). git names a nested
    repository under an ignored folder as one entry, `path/`: its files are listed here,
    walked in Python (no `.git` entered)."""
    names: list[str] = []
    for raw in run_bytes(worktree, *_LIST).split(b"\0"):
        if raw.endswith(b"/"):
            names += [rel for rel, _ in walk(worktree, os.fsdecode(raw.rstrip(b"/")))]
        elif raw:
            names.append(os.fsdecode(raw))
    return names


def stats(worktree: Path) -> dict[str, Stat]:
    # Joined as bytes: a Path per file costs more than its lstat (a virtualenv holds 10,000).
    base = os.fsencode(worktree) + b"/"
    found: dict[str, Stat] = {}
    for name in listing(worktree):
        try:
            info = os.lstat(base + os.fsencode(name))
        except OSError:
            continue
        found[name] = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
    return found


def record(worktree: Path) -> dict[str, list[object]]:
    """Each ignored file's stat and digest, for the loop's baseline. A file over RECORD_MAX
    gets no digest: its stat alone stands for it (a change to it is always named), so a
    dependency folder of large binaries costs a stat each, not a read."""
    return {
        n: [*s, _digest(worktree / n, s[0]) if s[1] <= RECORD_MAX else ""]
        for n, s in stats(worktree).items()
    }


def changes(
    worktree: Path, baseline: Mapping[str, Sequence[object]], hidden: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """(name, line) per ignored file new, gone or changed in content since `baseline`.

    At most NAMED_MAX are named (and only those are read): the folders with the fewest
    changes first, so a file planted alone is named while a cache folder of thousands is
    counted, one line per folder (its name "")."""
    now = stats(worktree)
    moved: list[str] = []
    for name in set(now) | set(baseline):
        before, after = baseline.get(name), now.get(name)
        # The stat first: naming a secret costs more than an lstat, for each of 10,000 files.
        if (before is None or tuple(before[:5]) != after) and not hidden(name):
            moved.append(name)
    per_folder = Counter(_folder(n) for n in moved)
    lines: list[tuple[str, str]] = []
    counted: Counter[str] = Counter()
    for name in sorted(moved, key=lambda n: (per_folder[_folder(n)], n)):
        before, after = baseline.get(name), now.get(name)
        if len(lines) >= NAMED_MAX:
            counted[_folder(name)] += 1
        elif after is None:
            lines.append((name, f"# - {name} (removed)"))
        else:
            digest = _digest(worktree / name, after[0])
            if before is None or (before[0], before[5]) != (after[0], digest):
                what = "new" if before is None else "changed"
                lines.append((name, f"# - {name} ({what}, {_describe(after, digest)})"))
    for folder, n in sorted(counted.items()):
        lines.append(("", f"# ... and {n} more new, changed or removed in {folder}/"))
    return lines


def _folder(name: str) -> str:
    return name.rpartition("/")[0] or "."


def _describe(info: Stat, digest: str) -> str:
    if digest.startswith(("link ", "unreadable ")):
        return digest.replace("link ", "a link to ", 1)
    return f"{info[1]} bytes, sha256 {digest}"


def _digest(path: Path, mode: int) -> str:
    """sha256 of a file's bytes, "link '<target>'" for a link, "unreadable <errno>"."""
    if stat.S_ISLNK(mode):
        try:
            return f"link {os.fsdecode(path.readlink())!r}"
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
    return digest.hexdigest()
