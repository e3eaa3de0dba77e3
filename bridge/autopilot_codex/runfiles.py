"""The files git and the hosts run programs from, found in a worktree and compared.

Each host names its own (`Host.run_files`); git's are in `wall.GIT_RUN_FILES`. A pattern is a
path relative to the worktree whose `**` stands for any number of folders, none included. The
loop records a digest of every matching file when it starts and compares at each session and
round start (`hosts/hostfiles.py`): a file added, changed or removed is named, before the
host reads it. Standard library only; reads the disk only when asked.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

# Inside a git directory only these hold what git runs; the rest (objects, refs, logs) is
# large and runs nothing, so the walk leaves it.
_GIT_KEPT = frozenset({"config", "hooks", "modules"})
_MODULE_SKIPPED = frozenset({"objects", "refs", "logs", "lfs"})


def matches(rel: str, patterns: Sequence[str]) -> bool:
    """Does the worktree-relative path `rel` match one of `patterns`?"""
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    return any(_match(parts, pattern.split("/")) for pattern in patterns)


def _match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(parts[i:], rest) for i in range(len(parts) + 1))
    return bool(parts) and parts[0] == head and _match(parts[1:], rest)


def _descend(rel_dir: list[str]) -> bool:
    """Whether the walk enters this folder: everywhere but a git directory's bulk."""
    if ".git" not in rel_dir:
        return True
    inside = rel_dir[len(rel_dir) - rel_dir[::-1].index(".git") :]
    if not inside:
        return True
    if inside[0] not in _GIT_KEPT:
        return False
    return inside[0] != "modules" or not _MODULE_SKIPPED.intersection(inside[1:])


def _walk(root: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(relative path, entry) of everything below `root` the comparison may need; links are
    entries, never followed."""
    stack: list[list[str]] = [[]]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(root.joinpath(*rel_dir)) as found:
                entries = list(found)
        except OSError:
            continue
        for entry in entries:
            rel = [*rel_dir, entry.name]
            yield "/".join(rel), entry
            if entry.is_dir(follow_symlinks=False) and _descend(rel):
                stack.append(rel)


def _digest(entry: os.DirEntry[str]) -> str:
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            return "link:" + os.readlink(entry.path)  # noqa: PTH115 - a DirEntry's path
        if not stat.S_ISREG(mode):
            return "special"
        digest = hashlib.sha256()
        with open(entry.path, "rb") as handle:  # noqa: PTH123 - a DirEntry's path
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
        return "sha256:" + digest.hexdigest()
    except OSError as exc:
        return f"unreadable:{type(exc).__name__}"


def scan(worktree: Path, patterns: Sequence[str]) -> dict[str, str]:
    """{relative path: digest} of every file (or link) in `worktree` that matches `patterns`."""
    # A path can match only if it holds one of the patterns' names: most files are passed over
    # without matching (a session start walks the whole tree).
    names = {part for pattern in patterns for part in pattern.split("/") if part != "**"}
    return {
        rel: _digest(entry)
        for rel, entry in _walk(worktree)
        if not names.isdisjoint(rel.split("/"))
        and not entry.is_dir(follow_symlinks=False)
        and matches(rel, patterns)
    }


def nested_git(worktree: Path) -> tuple[Path, ...]:
    """The git directories of the repositories nested in `worktree` (not its own `.git`)."""
    found = [
        worktree / rel
        for rel, entry in _walk(worktree)
        if entry.name == ".git" and rel != ".git" and entry.is_dir(follow_symlinks=False)
        and ".git" not in rel.split("/")[:-1]
    ]  # fmt: skip
    return tuple(sorted(found))


def changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Each file added, changed or removed between two scans, in words."""
    out = [f"{rel} (added)" for rel in sorted(after.keys() - before.keys())]
    out += [f"{rel} (changed)" for rel in sorted(before.keys() & after.keys()) if before[rel] != after[rel]]
    out += [f"{rel} (removed)" for rel in sorted(before.keys() - after.keys())]
    return out
