"""What a round changed, as git sees it: the whole working tree before and after.

A verifier's "I changed nothing" is checked, not believed. Comparing commits would miss
uncommitted edits, and comparing against HEAD would blame a round for edits an earlier round
left uncommitted; so each side is a snapshot of the working tree (tracked and untracked files,
the in-tree .gitignore files respected; `.git/info/exclude` and the index's skip-worktree and
assume-unchanged flags, which a round can set, are not) written as a git tree through a private index
whose stat data only the bridge's git wrote (a round can forge `.git/index`'s, so that an edited
file's entry keeps the old blob and git never reads the file). Nothing visible changes:
no ref, no index, no stash — only unreferenced objects that git's gc collects.

A nested repository or submodule is never entered: `add` leaves its path alone (a gitlink
there would make the next git descend into it and run its config), and the snapshot holds,
at its path, a blob listing its HEAD and every file in it with size and sha256, read in
Python (gitrepo/nested.py). So an edit inside one changes the snapshot and is named by the
repository's path.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..gitrepo import nested, run_bytes, run_git, statcache
from .handoff import WORKSPACE


def _git(root: Path, index: str, *args: str) -> str:
    """git with a private index, so the user's staging area is never touched."""
    return run_git(root, *args, index_file=index)


def snapshot(root: Path) -> str:
    """The working tree as a git tree id."""
    # The stat cache makes `add -A` rehash only what changed: the bridge's own (statcache.py),
    # never the user's index's, which a round can forge to hide an edit from git.
    index = statcache.own_index(root)
    with tempfile.TemporaryDirectory(prefix="autopilot-codex-") as scratch:
        private = str(Path(scratch) / "index")
        if index is not None:
            shutil.copyfile(index, private)
        _unflag(root, private)
        inner = nested.find(root)
        _git(root, private, "add", "-A", "--", ".", *(f":(exclude,literal){r.path}" for r in inner))
        _add_excluded(root, private)
        for repo in inner:
            _stand_in(root, private, repo)
        return _git(root, private, "write-tree").strip()


def _stand_in(root: Path, index: str, repo: nested.Nested) -> None:
    """A blob at the nested repository's path: its HEAD and its files, as read in Python."""
    lines = [f"{repo.kind} HEAD {repo.head}".encode()]
    for rel, (kind, mode, size, *_, sha) in sorted(nested.scan(root, repo.path).items()):
        lines.append(
            f"{kind} {mode:o} {size} ".encode() + os.fsencode(sha) + b"\t" + os.fsencode(rel)
        )
    blob = run_bytes(root, "hash-object", "-w", "--no-filters", "--stdin", stdin=b"\n".join(lines))
    info = f"100644,{blob.decode('ascii').strip()},{repo.path}"
    run_bytes(root, "update-index", "--add", "--replace", "--cacheinfo", info, index_file=index)


def _unflag(root: Path, index: str) -> None:
    """Clear skip-worktree and assume-unchanged in the private copy: `add -A` would trust the
    index for those paths, so a round could hide an edit by flagging the file."""
    tagged = run_bytes(root, "ls-files", "-v", "-z", index_file=index).split(b"\0")
    # One flag per call: given both, update-index applies only the last.
    for flag, pick in (
        ("--no-skip-worktree", lambda tag: tag in (b"S", b"s")),
        ("--no-assume-unchanged", lambda tag: tag.islower()),
    ):
        paths = [e[2:] for e in tagged if e and pick(e[:1])]
        if paths:
            stdin = b"\0".join(paths) + b"\0"
            run_bytes(root, "update-index", flag, "-z", "--stdin", index_file=index, stdin=stdin)


def _add_excluded(root: Path, index: str) -> None:
    """Add the files `add -A` left out for `.git/info/exclude` alone (the in-tree .gitignore
    files are the change's own, and in the snapshot): a round can write that file."""
    args = ("ls-files", "--others", "--exclude-per-directory=.gitignore", "-z")
    listed = run_bytes(root, *args, index_file=index).split(b"\0")
    names = [n for n in listed if n and not n.endswith(b"/")]  # a nested repository: _stand_in
    if names:
        stdin = b"\0".join(names) + b"\0"
        run_bytes(root, "update-index", "--add", "-z", "--stdin", index_file=index, stdin=stdin)


def changed_between(root: Path, before: str, after: str) -> list[str]:
    if before == after:
        return []
    out = run_bytes(root, "diff", "--name-only", "--no-renames", "-z", before, after)
    # Names as bytes, decoded the way the file system's are: never a replacement character.
    names = (os.fsdecode(n) for n in out.split(b"\0") if n)
    return sorted(n for n in names if not n.startswith(f"{WORKSPACE}/"))
