"""One walk of a work tree, without following a link, for what reads the whole tree as a loop
starts: the run files (`runfiles.py`), the nested repositories' git folders the wall
protects and the nested baseline's files (`gitrepo/nested.py`). `shared(root)` walks once for
a block (a loop's start): within it, `tree(root)` is that walk.

Each folder is opened relative to the one above with O_NOFOLLOW|O_DIRECTORY (as `nofollow`
does), only as many at once as the walk is deep; inside a git directory only what runs programs
is entered. An entry's kind comes from the listing; its lstat is taken only inside a nested
repository (a folder below the root holding a `.git`): one for every file would cost more than
the walk.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from . import nofollow

_ISDIR = getattr(os, "O_DIRECTORY", 0)
_DIR = os.O_RDONLY | _ISDIR | getattr(os, "O_NOFOLLOW", 0)
# Inside a git directory only these hold what git runs.
_GIT_KEPT = frozenset({"config", "hooks", "modules"})
_MODULE_SKIPPED = frozenset({"objects", "refs", "logs", "lfs"})


@dataclass(frozen=True)
class Tree:
    """(relative path, is a folder) of every entry walked; the lstat of each entry inside a
    nested repository (a folder below the root holding a `.git`), and those folders."""

    entries: tuple[tuple[str, bool], ...] = ()
    stats: dict[str, os.stat_result] = field(default_factory=dict)
    repos: frozenset[str] = frozenset()


def descend(parts: list[str]) -> bool:
    """Whether the walk enters this folder: everywhere but a git directory's bulk."""
    if ".git" not in parts:
        return True
    inside = parts[len(parts) - parts[::-1].index(".git") :]
    if not inside:
        return True
    if inside[0] not in _GIT_KEPT:
        return False
    return inside[0] != "modules" or not _MODULE_SKIPPED.intersection(inside[1:])


def walk(root: Path, folder: str = "") -> Tree:
    """The walk of `root`, or of `folder` inside it (reached without following a link), all of
    whose entries are then stat'd: it is a nested repository's."""
    entries: list[tuple[str, bool]] = []
    stats: dict[str, os.stat_result] = {}
    repos: set[str] = set()

    def listed(fd: int, parts: list[str], nested: bool) -> tuple[bool, list[str]]:
        """Record one folder's entries; (inside a nested repository, its folders to enter)."""
        with os.scandir(fd) as found:
            here = list(found)
        if parts and ".git" not in parts and any(e.name == ".git" for e in here):
            nested = True
            repos.add("/".join(parts))
        folders = []
        for entry in here:
            rel = "/".join([*parts, entry.name])
            folder = entry.is_dir(follow_symlinks=False)
            entries.append((rel, folder))
            if nested:
                with contextlib.suppress(OSError):
                    stats[rel] = entry.stat(follow_symlinks=False)
            if folder and descend([*parts, entry.name]):
                folders.append(entry.name)
        return nested, folders

    def enter(opener: Callable[[], int], parts: list[str], nested: bool) -> None:
        """Open a folder, record it and put it on the stack; a folder that cannot be opened
        or listed (gone, a link, unreadable) is passed over."""
        try:
            fd = opener()
        except (OSError, nofollow.LinkRefused):
            return
        # On the stack at once, to be closed however the walk ends.
        stack.append((fd, parts, nested, iter(())))
        with contextlib.suppress(OSError):
            inner, folders = listed(fd, parts, nested)
            stack[-1] = (fd, parts, inner, iter(folders))

    stack: list[tuple[int, list[str], bool, Iterator[str]]] = []
    try:
        enter(partial(_top, root, folder), folder.split("/") if folder else [], bool(folder))
        while stack:
            fd, parts, nested, rest = stack[-1]
            if (name := next(rest, None)) is None:
                os.close(fd)
                stack.pop()
            else:
                enter(partial(os.open, name, _DIR, dir_fd=fd), [*parts, name], nested)
    finally:
        for fd, *_ in stack:
            os.close(fd)
    return Tree(tuple(entries), stats, frozenset(repos))


def _top(root: Path, folder: str) -> int:
    if not folder:
        # The root as named (it may lie behind a link, as a temporary folder does).
        return os.open(root, os.O_RDONLY | _ISDIR)
    with nofollow.folder(root, folder, create=False) as fd:
        return os.dup(fd)


_shared: dict[str, Tree] = {}


@contextlib.contextmanager
def shared(root: Path) -> Iterator[None]:
    """Within this block, `tree(root)` is one walk made as it starts."""
    key = os.fspath(root)
    _shared[key] = walk(root)
    try:
        yield
    finally:
        del _shared[key]


def tree(root: Path) -> Tree:
    """The shared walk of `root` (see `shared`), else a walk now."""
    return sharing(root) or walk(root)


def sharing(root: Path) -> Tree | None:
    """The shared walk of `root`, None outside `shared`."""
    return _shared.get(os.fspath(root))
