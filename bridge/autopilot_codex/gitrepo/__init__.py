"""All git access, through one hardened runner (runner.py). Nothing here changes the
repository.

Every call runs the git binary directly: it runs on every edit, and importing gitpython alone
costs more than the interpreter's own start-up; and gitpython would run `git` from PATH with
the bridge's whole environment.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from ..errors import BridgeError
from ..rails.secrets import is_secret_path
from . import basestore, nested
from .inside import record as record_nested
from .review import (
    UNTRACKED_BYTES_MAX,
    UNTRACKED_FILES_MAX,
    Diff,
    changed_names,
    diff_since,
    unseen_in_head,
)
from .runner import Location, identity, locate, run_bytes, run_git
from .tamper import GitFinding, findings

__all__ = [
    "EMPTY_TREE",
    "UNTRACKED_BYTES_MAX",
    "UNTRACKED_FILES_MAX",
    "BridgeError",
    "Diff",
    "GitFinding",
    "Location",
    "commits_since",
    "changed_names",
    "diff_since",
    "findings",
    "git_path",
    "head_sha",
    "identity",
    "keep_base",
    "locate",
    "nested",
    "record_nested",
    "run_bytes",
    "run_git",
    "toplevel",
    "tracked_files",
    "unseen_in_head",
]

# `git hash-object -t tree /dev/null`: the base of a repository without commits.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def head_sha(worktree: Path) -> str:
    """HEAD's commit, or the empty tree when nothing is committed yet. Detached HEAD is fine."""
    out = run_git(worktree, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
    return out.strip() or EMPTY_TREE


def toplevel(path: Path) -> Path:
    """The work tree holding `path` (the nearest `.git`, never `core.worktree`)."""
    return locate(path).work_tree


def git_path(worktree: Path, name: str) -> Path:
    out = Path(run_git(worktree, "rev-parse", "--git-path", name).strip())
    return out if out.is_absolute() else locate(worktree).work_tree / out


def commits_since(worktree: Path, base: str, *, limit: int = 50) -> list[str]:
    if head_sha(worktree) == EMPTY_TREE:
        return []
    spec = "HEAD" if base == EMPTY_TREE else f"{base}..HEAD"
    out = run_git(worktree, "log", spec, f"--max-count={limit}", "--format=%h %s", "--")
    return [line for line in out.splitlines() if line]


def tracked_files(worktree: Path, *, limit: int = 400) -> tuple[list[str], int]:
    out = run_bytes(worktree, "ls-files", "-z")
    names = [n for n in out.decode("utf-8", "replace").split("\0") if n and not is_secret_path(n)]
    return names[:limit], len(names)


def keep_base(worktree: Path, sha: str) -> None:
    """Copy a base the bridge records into its own object store, hashing each object
    (basestore.py). Objects already forged are not an error here: the first review of that
    base copies again and fails, naming the base."""
    with contextlib.suppress(BridgeError):
        basestore.objects(worktree, sha)
