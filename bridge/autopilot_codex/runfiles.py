"""The files git and the hosts run programs from, found in a worktree and compared.

Each host names its own (`Host.run_files`); git's are in `wall.GIT_RUN_FILES`. A pattern is a
path relative to the worktree whose `**` stands for any number of folders, none included. The
loop records a digest of every matching file when it starts and compares at each session and
round start (`hosts/hostfiles.py`): a file added, changed or removed is named, before the
host reads it. The tree is walked once (`treewalk`; one walk for a loop's whole start) and each
file read without following a link (`nofollow`); the disk is read only when asked.
"""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Sequence
from pathlib import Path

from . import nofollow, treewalk


def matches(rel: str, patterns: Sequence[str]) -> bool:
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    return any(_match(parts, pattern.split("/")) for pattern in patterns)


def _match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(parts[i:], rest) for i in range(len(parts) + 1))
    return bool(parts) and parts[0] == head and _match(parts[1:], rest)


def _digest(root: Path, rel: str) -> str:
    try:
        mode = nofollow.lstat(root, rel).st_mode
        if stat.S_ISLNK(mode):
            return "link:" + nofollow.readlink(root, rel)
        if not stat.S_ISREG(mode):
            return "special"
        digest = hashlib.sha256()
        with nofollow.reading(root, rel) as handle:
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
        return "sha256:" + digest.hexdigest()
    except (OSError, nofollow.LinkRefused) as exc:
        return f"unreadable:{type(exc).__name__}"


def scan(worktree: Path, patterns: Sequence[str]) -> dict[str, str]:
    """{relative path: digest} of every file (or link) in `worktree` that matches `patterns`."""
    # A path can match only if it holds one of the patterns' names: most files are passed over
    # without matching (a session start walks the whole tree).
    names = {part for pattern in patterns for part in pattern.split("/") if part != "**"}
    return {
        rel: _digest(worktree, rel)
        for rel, folder in treewalk.tree(worktree).entries
        if not folder and not names.isdisjoint(rel.split("/")) and matches(rel, patterns)
    }


def nested_git(worktree: Path) -> tuple[Path, ...]:
    """The git directories of the repositories nested in `worktree` (not its own `.git`)."""
    found = [
        worktree / rel
        for rel, folder in treewalk.tree(worktree).entries
        if folder and rel.endswith("/.git") and ".git" not in rel.split("/")[:-1]
    ]
    return tuple(sorted(found))


# An empty file runs nothing and sets nothing, and a host's sandbox makes one where a path it
# keeps from the implementer is missing (a mount point: Claude Code's makes
# `.git/config.worktree`): compared, an empty file and no file read alike.
EMPTY = "sha256:" + hashlib.sha256(b"").hexdigest()


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Each file added, changed or removed between two scans, in words (an empty file counted
    as none: `EMPTY`)."""
    before = {rel: digest for rel, digest in before.items() if digest != EMPTY}
    after = {rel: digest for rel, digest in after.items() if digest != EMPTY}
    out = [f"{rel} (added)" for rel in sorted(after.keys() - before.keys())]
    out += [f"{rel} (changed)" for rel in sorted(before.keys() & after.keys()) if before[rel] != after[rel]]
    out += [f"{rel} (removed)" for rel in sorted(before.keys() - after.keys())]
    return out
