"""All git access, through gitpython. Nothing here ever changes the repository."""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git

from .errors import BridgeError

# `git hash-object -t tree /dev/null`: the base of a repository without commits.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Never read, diffed or sent to the manager.
SECRET_PATTERNS = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "credentials",
    "credentials.*",
    "*.secret",
    "*.secrets",
)

# Untracked files are diffed in Python, a bounded number and size of them.
UNTRACKED_FILES_MAX = 200
UNTRACKED_BYTES_MAX = 64 * 1024


def is_secret(path: str) -> bool:
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatch(name, pattern) for pattern in SECRET_PATTERNS)


@dataclass(frozen=True)
class Diff:
    text: str
    files: tuple[str, ...]

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "surrogateescape")).hexdigest()

    @property
    def empty(self) -> bool:
        return not self.text.strip()


def open_repo(worktree: Path) -> git.Repo:
    try:
        return git.Repo(worktree)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise BridgeError(f"{worktree} is not a git repository") from exc


def head_sha(repo: git.Repo) -> str:
    """HEAD's commit, or the empty tree when nothing is committed yet. Detached HEAD is fine."""
    try:
        return repo.head.commit.hexsha
    except ValueError:
        return EMPTY_TREE


def _pathspec(exclude: tuple[str, ...]) -> list[str]:
    specs = ["--", "."]
    specs += [f":(exclude,glob)**/{pattern}" for pattern in SECRET_PATTERNS]
    specs += [f":(exclude){path}" for path in exclude]
    return specs


def diff_since(repo: git.Repo, base: str, *, exclude: tuple[str, ...] = ()) -> Diff:
    """Working tree against `base`, untracked files included, secrets left out."""
    tracked = repo.git.diff(
        base, "--no-color", "--no-ext-diff", "--find-renames", *_pathspec(exclude)
    )
    names = repo.git.diff(base, "--name-only", "--no-ext-diff", *_pathspec(exclude)).splitlines()
    untracked = [
        p
        for p in repo.git.ls_files(
            "--others", "--exclude-standard", *_pathspec(exclude)
        ).splitlines()
        if p and not is_secret(p)
    ]
    parts = [tracked] if tracked else []
    root = Path(repo.working_tree_dir or ".")
    for path in untracked[:UNTRACKED_FILES_MAX]:
        parts.append(_new_file_diff(root, path))
    if len(untracked) > UNTRACKED_FILES_MAX:
        parts.append(f"# ... and {len(untracked) - UNTRACKED_FILES_MAX} more new files")
    return Diff("\n".join(parts), tuple(names + untracked))


def _new_file_diff(root: Path, path: str) -> str:
    header = f"diff --git a/{path} b/{path}\nnew file\n--- /dev/null\n+++ b/{path}"
    try:
        with (root / path).open("rb") as handle:
            data = handle.read(UNTRACKED_BYTES_MAX + 1)
    except OSError:
        return header + "\n# (unreadable)"
    if b"\0" in data[:8192]:
        return header + "\nBinary file"
    text = data[:UNTRACKED_BYTES_MAX].decode("utf-8", "replace")
    lines = [f"+{line}" for line in text.splitlines()]
    more = "\n# (truncated)" if len(data) > UNTRACKED_BYTES_MAX else ""
    return f"{header}\n@@ -0,0 +1,{len(lines)} @@\n" + "\n".join(lines) + more


def commits_since(repo: git.Repo, base: str, *, limit: int = 50) -> list[str]:
    if base == EMPTY_TREE:
        spec = "HEAD"
        if head_sha(repo) == EMPTY_TREE:
            return []
    else:
        spec = f"{base}..HEAD"
    out = repo.git.log(spec, f"--max-count={limit}", "--format=%h %s")
    return [line for line in out.splitlines() if line]


def tracked_files(repo: git.Repo, *, limit: int = 400) -> tuple[list[str], int]:
    names = [n for n in repo.git.ls_files().splitlines() if n and not is_secret(n)]
    return names[:limit], len(names)
