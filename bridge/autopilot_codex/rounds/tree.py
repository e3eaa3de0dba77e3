"""What a round changed, as git sees it: the whole working tree before and after.

A verifier's "I changed nothing" is checked, not believed. Comparing commits would miss
uncommitted edits, and comparing against HEAD would blame a round for edits an earlier round
left uncommitted; so each side is a snapshot of the working tree (tracked and untracked files,
ignores respected) written as a git tree through a private index. Nothing visible changes:
no ref, no index, no stash — only unreferenced objects that git's gc collects.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..gitrepo import git_path, run_git
from .handoff import WORKSPACE


def _git(root: Path, index: str, *args: str) -> str:
    """git with a private index, so the user's staging area is never touched."""
    return run_git(root, *args, index_file=index)


def snapshot(root: Path) -> str:
    """The working tree as a git tree id."""
    index = git_path(root, "index")
    with tempfile.TemporaryDirectory(prefix="autopilot-codex-") as scratch:
        private = str(Path(scratch) / "index")
        if index.exists():
            # The real index's stat cache makes `add -A` rehash only what changed.
            shutil.copyfile(index, private)
        _git(root, private, "add", "-A")
        return _git(root, private, "write-tree").strip()


def changed_between(root: Path, before: str, after: str) -> list[str]:
    if before == after:
        return []
    out = run_git(root, "diff", "--name-only", "--no-renames", "-z", before, after)
    return sorted(n for n in out.split("\0") if n and not n.startswith(f"{WORKSPACE}/"))
