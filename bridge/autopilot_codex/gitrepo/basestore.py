"""An object store of the bridge's own for the bases it compares the work tree against.

git reads an object by its name and never checks that the content hashes to it. The
implementer writes `.git/objects` (committing is its work), so it can rewrite the loose blob of
a base's file with the file's new content, and `git diff <base>` then shows no change; a
rewritten tree could hide a whole folder. So each base the bridge records (the loop's and each
task's, at the moment it is recorded, and again before any read of it) has its commit, tree
and blobs copied into a store in the state home, where only the bridge writes:
`pack-objects` reads them from the repository, `index-pack` writes them here under the name
it computes by hashing each one, so a forged object can only enter under its true name. The
copy is then checked in this store alone (`rev-list --objects` with no alternate): a base
whose objects the implementer forged before they were copied has an object missing, and
`keep` raises BridgeError naming the base (the review then fails as a git failure does).

The reads against a base (`objects()`) search this store first and the repository's own as an
alternate for everything else (the work tree's new blobs, the index's).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ..errors import BridgeError
from ..paths import project_dir
from .runner import locate, run_bytes

FOLDER = "base-objects"
KEPT = "kept"  # the bases copied and checked, one a line, the newest last
# Bases named as already copied when a new one is: its objects shared with them are not copied.
SINCE = 8
# The empty tree (SHA-1 and SHA-256), built into git.
_EMPTY = (
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
)


def store(worktree: Path) -> Path:
    return project_dir(worktree) / FOLDER


def objects(worktree: Path, base: str) -> Path | None:
    """The store holding `base`'s objects, copied now if they are not yet (None for a base
    that is no object's full name, such as the empty tree, which git holds in itself)."""
    if not _named(base) or base in _EMPTY:
        return None
    keep(worktree, base)
    return store(worktree)


def keep(worktree: Path, base: str) -> None:
    """Copy `base` (a commit's full name) into the store and check it there; a no-op once
    done. BridgeError when the repository's objects for it are missing or forged."""
    folder = store(worktree)
    kept = _kept(folder)
    if base in kept:
        return
    try:
        (folder / "pack").mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise BridgeError(f"the base's object store {folder} cannot be made: {exc}") from exc
    where = locate(worktree)
    # The base's commit, then what its tree holds that the kept ones' trees do not. Trees, not
    # commits: a kept commit excluded excludes its ancestors too, so a base copied after a
    # descendant (the checks' digest keeps HEAD first) would lose its own commit.
    since = [f"^{k}^{{tree}}" for k in kept[-SINCE:]]
    # Already-copied objects are read from this store, never the repository's.
    names = run_bytes(where, "rev-list", "--objects", f"{base}^{{tree}}", *since, objects=folder)
    listed = base.encode() + b"\n"
    listed += b"".join(line.split(b" ", 1)[0] + b"\n" for line in names.splitlines() if line)
    if listed:
        # No delta search: a base's blobs seldom share content, and it cost half the copy.
        pack = run_bytes(
            where, "pack-objects", "--stdout", "-q", "--window=0", stdin=listed, objects=folder
        )
        run_bytes(where, "index-pack", "--stdin", stdin=pack, objects=folder, alternate=False)
    try:
        run_bytes(
            where, "rev-list", "--objects", "--no-walk", base, objects=folder, alternate=False
        )
    except BridgeError as exc:
        raise BridgeError(
            f"the repository's objects for the base {base[:12]} do not hash to their names "
            f"or are missing (was .git/objects rewritten?): {exc}"
        ) from exc
    with contextlib.suppress(OSError), (folder / KEPT).open("a", encoding="ascii") as out:
        out.write(base + "\n")


def _kept(folder: Path) -> list[str]:
    try:
        text = (folder / KEPT).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return []
    return [line for line in text.splitlines() if _named(line)]


def _named(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
