"""All git access. Nothing here ever changes the repository.

The per-edit path (HEAD, the diff a review sees) runs the git binary directly: it runs on every
edit, and importing gitpython alone costs more than the interpreter's own start-up. The
plan and verdict paths, which wait on a manager call anyway, use gitpython.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import BridgeError
from .rails.secrets import is_secret_path

if TYPE_CHECKING:
    import git

# `git hash-object -t tree /dev/null`: the base of a repository without commits.
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

# Untracked files are diffed in Python, a bounded number and size of them.
UNTRACKED_FILES_MAX = 200
UNTRACKED_BYTES_MAX = 64 * 1024
GIT_TIMEOUT_S = 60


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


def run_git(
    worktree: Path,
    *args: str,
    ok_codes: tuple[int, ...] = (0,),
    env: Mapping[str, str] | None = None,
) -> str:
    """git's stdout; a one-line BridgeError when it fails. `env` replaces the environment."""
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=worktree,
            env=env,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BridgeError(f"git {args[0]} failed in {worktree}: {exc}") from exc
    if proc.returncode not in ok_codes:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BridgeError(
            f"git {args[0]} failed in {worktree}: {detail[-1] if detail else proc.returncode}"
        )
    return proc.stdout.decode("utf-8", "replace")


def head_sha(worktree: Path) -> str:
    """HEAD's commit, or the empty tree when nothing is committed yet. Detached HEAD is fine."""
    out = run_git(worktree, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok_codes=(0, 1))
    return out.strip() or EMPTY_TREE


def diff_since(worktree: Path, base: str, *, exclude: tuple[str, ...] = ()) -> Diff:
    """Working tree against `base`, untracked files included, secrets left out.

    Secrets are found by name in Python and excluded by literal path only when present: glob
    pathspecs for every secret pattern made each `git diff` about 2.6 times slower.
    """

    def hidden(path: str) -> bool:
        return is_secret_path(path) or any(
            path == e or path.startswith(e.rstrip("/") + "/") for e in exclude
        )

    status = run_git(
        worktree, "diff", base, "--name-status", "--find-renames", "--no-ext-diff", "-z"
    )
    changed, carried = _changes(status)
    others = _names(run_git(worktree, "ls-files", "--others", "--exclude-standard", "-z"))
    # A secret renamed or copied to an innocent name still carries the secret.
    secret = {p for p in changed if hidden(p)} | {new for old, new in carried if hidden(old)}
    skipped = [f":(exclude,literal){p}" for p in sorted(secret)]
    spec = ["--", ".", *skipped] if skipped else []
    tracked = run_git(
        worktree, "diff", base, "--no-color", "--no-ext-diff", "--find-renames", *spec
    )
    untracked = [p for p in others if not hidden(p)]
    parts = [tracked.rstrip("\n")] if tracked.strip() else []
    for path in untracked[:UNTRACKED_FILES_MAX]:
        parts.append(_new_file_diff(worktree, path))
    if len(untracked) > UNTRACKED_FILES_MAX:
        parts.append(f"# ... and {len(untracked) - UNTRACKED_FILES_MAX} more new files")
    files = [p for p in changed if p not in secret] + untracked
    return Diff("\n".join(parts), tuple(files))


def _names(output: str) -> list[str]:
    return [name for name in output.split("\0") if name]


def _changes(name_status: str) -> tuple[list[str], list[tuple[str, str]]]:
    """Paths from `--name-status -z`, and the (old, new) pairs of renames and copies."""
    fields = _names(name_status)
    paths: list[str] = []
    carried: list[tuple[str, str]] = []
    i = 0
    while i < len(fields):
        code = fields[i]
        if code[:1] in ("R", "C") and i + 2 < len(fields):
            old, new = fields[i + 1], fields[i + 2]
            paths += [old, new]
            carried.append((old, new))
            i += 3
        else:
            if i + 1 < len(fields):
                paths.append(fields[i + 1])
            i += 2
    return paths, carried


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


def commits_since(worktree: Path, base: str, *, limit: int = 50) -> list[str]:
    import git

    repo = _repo(worktree)
    if head_sha(worktree) == EMPTY_TREE:
        return []
    spec = "HEAD" if base == EMPTY_TREE else f"{base}..HEAD"
    try:
        out = repo.git.log(spec, f"--max-count={limit}", "--format=%h %s")
    except git.GitCommandError as exc:
        raise BridgeError(f"git log failed in {worktree}: {exc.stderr.strip()}") from exc
    return [line for line in out.splitlines() if line]


def tracked_files(worktree: Path, *, limit: int = 400) -> tuple[list[str], int]:
    names = [n for n in _repo(worktree).git.ls_files().splitlines() if n and not is_secret_path(n)]
    return names[:limit], len(names)


def _repo(worktree: Path) -> git.Repo:
    import git

    try:
        return git.Repo(worktree)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise BridgeError(f"{worktree} is not a git repository") from exc
