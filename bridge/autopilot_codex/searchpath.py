"""The PATH a program is looked up on: never a folder the implementer may write.

A relative PATH entry (`node_modules/.bin`, `.`, an empty one) resolves in the current folder,
which for a hook, a command and the rounds driver is the work tree; an absolute entry inside
the work tree (direnv's `PATH_add bin`) is the implementer's too. A program found there would
run unwalled, as the user. The launcher drops such entries from PATH before Python starts
(bin/autopilot-codex); the lookups here drop them again for the folders they are handed (the
rounds driver's work tree, which `-C` may put elsewhere than the launcher's folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# What is left when nothing on PATH can be trusted; the launcher falls back to the same.
FALLBACK = "/usr/bin:/bin"


def work_tree_top(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` holding a `.git`, or None."""
    for place in (folder, *folder.parents):
        if place != place.parent and (place / ".git").exists():
            return place
    return None


def _trees(folders: tuple[Path, ...]) -> list[str]:
    """The work trees of ``folders`` (each as named and as resolved), but one holding the home."""
    home = os.path.normpath(os.environ.get("HOME") or "/")
    trees: list[str] = []
    for folder in folders:
        if not folder.is_absolute():
            continue
        for form in (folder, Path(os.path.realpath(folder))):
            top = work_tree_top(form)
            if top is not None and not _inside(home, os.path.normpath(top)):
                trees.append(os.path.normpath(top))
    return trees


def _inside(entry: str, base: str) -> bool:
    return entry == base or entry.startswith(base.rstrip("/") + "/")


def trusted_path(path: str, *folders: Path) -> str:
    """``path`` without its empty and relative entries, those with a `.` or `..` part, and
    those inside the git work tree of one of ``folders`` (as named and as resolved); a work tree
    holding the home is not taken for the implementer's (as in the launcher)."""
    bases = _trees(folders)
    kept: list[str] = []
    for entry in path.split(os.pathsep):
        if not entry.startswith("/") or {".", ".."} & set(entry.split("/")):
            continue
        forms = (os.path.normpath(entry), os.path.realpath(entry))
        if any(_inside(form, base) for form in forms for base in bases):
            continue
        kept.append(entry)
    return os.pathsep.join(kept) or FALLBACK


def which(name: str, path: str | None, *folders: Path) -> str | None:
    """`shutil.which` on ``path`` (this process's PATH when None) as `trusted_path` leaves it,
    ``folders`` defaulting to the current folder."""
    search = os.environ.get("PATH", "") if path is None else path
    return shutil.which(name, path=trusted_path(search, *(folders or (Path.cwd(),))))
