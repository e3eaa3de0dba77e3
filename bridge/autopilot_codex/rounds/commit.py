"""The driver commits each round's changes, so no round needs a writable git directory.

A Codex round runs in its workspace-write sandbox, which keeps the git directory read-only:
with it writable (`--add-dir`), a round could plant `.git/config` or `.git/hooks` that the
driver's own git then runs. So the driver commits, after the round, whatever the round left
uncommitted (a Claude round may still commit on its own; the rest is the driver's), with the
round's own summary as the message and a trailer naming the round.

What the driver never commits: the run's folder (`.autopilot-codex/`, whatever the exclude
file says by then) and files named like secrets (`.env`, keys), which stay in the worktree
uncommitted; nested repositories and submodules (a folder with its own `.git`), which stay as
they are: the driver never stages a gitlink, since the next git to see one would descend into
it and run its config, and a gitlink the round staged itself is unstaged again (its commit as
HEAD has it stays). They are named in the run's log. Hooks are off for this commit
(`core.hooksPath=/dev/null`, `--no-verify`): they are files the round could have written.
The index's stat data is not trusted either (a round can forge it so that `add` never reads an
edited file): an entry whose file differs from its blob by the bridge's own stat data
(gitrepo/statcache.py) loses its stat before `add`, which then hashes the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..gitrepo import EMPTY_TREE, head_sha, identity, nested, run_bytes, run_git, statcache
from ..output import visible
from ..rails.secrets import is_secret_path
from .handoff import WORKSPACE
from .markers import strip

SUBJECT_MAX = 72
TRAILER = "Autopilot-Codex-Round"
# Nothing the round wrote may run while the driver commits.
SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false")


@dataclass(frozen=True)
class Committed:
    sha: str  # "" when there was nothing to commit
    left_out: tuple[str, ...]  # secret-named files left uncommitted
    nested: tuple[str, ...] = ()  # nested repositories and submodules left as they were


def subject(last_message: str, round_no: int) -> str:
    """The commit's first line: the round's final message's first line, bounded, with each
    character a terminal obeys written out (`git log` prints it unfiltered without a pager)."""
    for line in strip(last_message).splitlines():
        text = visible(" ".join(line.strip().lstrip("#*-> ").split()))
        if text:
            return text if len(text) <= SUBJECT_MAX else text[: SUBJECT_MAX - 1].rstrip() + "…"
    return f"autopilot-codex round {round_no}"


def message(last_message: str, round_no: int, run: str) -> str:
    return (
        f"{subject(last_message, round_no)}\n\n{TRAILER}: {round_no}\nAutopilot-Codex-Run: {run}\n"
    )


def _names(root: Path, *args: str) -> list[str]:
    """Paths git lists with `-z`, decoded as the file system's names are (never replaced)."""
    return [os.fsdecode(n) for n in run_bytes(root, *SAFE, *args, "-z").split(b"\0") if n]


def _git(root: Path, *args: str, ok_codes: tuple[int, ...] = (0,)) -> str:
    return run_git(root, *SAFE, *args, ok_codes=ok_codes)


def commit_round(root: Path, last_message: str, round_no: int, run: str) -> Committed:
    """Commit what the round left uncommitted; raises BridgeError when git refuses."""
    changed = _names(root, "ls-files", "--modified", "--deleted", "--others", "--exclude-standard")
    secret = sorted({p for p in changed if is_secret_path(p)})
    inner = [r.path for r in nested.find(root)]
    committed = _gitlinks(root, "ls-tree", "-r", "HEAD")
    _unstat(root)
    # Naming an ignored path, even to exclude it, makes `add` fail: the run's folder is
    # unstaged afterwards instead, should the round have un-ignored it.
    _git(root, "add", "-A", "--", ".", *(f":(exclude,literal){p}" for p in [*secret, *inner]))
    moved = {p for p, _ in _gitlinks(root, "ls-files", "--stage") - committed}
    _unstage(root, sorted(moved))
    staged = _names(root, "diff", "--cached", "--name-only", "--no-renames")
    kept_out = [p for p in staged if is_secret_path(p) or p.startswith(f"{WORKSPACE}/")]
    # Staged by the round itself, or un-ignored: unstaged again, never committed here.
    _unstage(root, kept_out)
    left_out = tuple(sorted({*secret, *(p for p in kept_out if is_secret_path(p))}))
    kept = tuple(sorted(moved | (set(inner) - {p for p, _ in committed})))
    if not _git(root, "diff", "--cached", "--name-only", "-z").strip("\0"):
        return Committed("", left_out, kept)
    text = message(last_message, round_no, run)
    run_git(root, *SAFE, "commit", "--no-verify", "-q", "-m", text, author=identity(root))
    return Committed(head_sha(root), left_out, kept)


def _gitlinks(root: Path, *listing: str) -> set[tuple[str, str]]:
    """(path, commit) of each gitlink `ls-files --stage` or `ls-tree -r HEAD` lists."""
    if listing[0] == "ls-tree" and head_sha(root) == EMPTY_TREE:
        return set()
    found = set()
    for entry in _names(root, *listing):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if fields and fields[0] == "160000":
            found.add((path, fields[1] if listing[0] == "ls-files" else fields[2]))
    return found


def _unstat(root: Path) -> None:
    """Drop the index's stat data for each entry whose file the bridge's own index (same
    entries, stat only the bridge's git wrote) finds changed: `add` then reads the file."""
    own = statcache.own_index(root)
    if own is None:
        return
    args = ("diff-files", "--name-only", "--ignore-submodules=all", "-z")
    stale = {n for n in run_bytes(root, *SAFE, *args, index_file=own).split(b"\0") if n}
    entries = run_bytes(root, *SAFE, "ls-files", "--stage", "-z").split(b"\0")
    again = [e + b"\0" for e in entries if e and e.partition(b"\t")[2] in stale]
    if again:
        # The same entries (mode, blob, stage, path), given anew: with no stat.
        run_bytes(root, *SAFE, "update-index", "-z", "--index-info", stdin=b"".join(again))


def _unstage(root: Path, paths: list[str]) -> None:
    if not paths:
        return
    # Names the round chose: each a path of its own, never pathspec magic (`:(glob)*`).
    paths = [f":(literal){p}" for p in paths]
    if head_sha(root) == EMPTY_TREE:
        _git(root, "rm", "-q", "--cached", "--ignore-unmatch", "--", *paths)
    else:
        _git(root, "reset", "-q", "--", *paths)
