"""What changed inside nested repositories, for the review: bytes read here, never by git.

Each file inside a nested repository or submodule is compared with the manifest recorded
when the loop started (nested.record): a file whose kind, mode or sha256 differs, or that is
new, is shown as an untracked file is (content up to the same bounds, binary and links named,
secrets left out); one that is gone is named with the size and hash it had; a HEAD that moved
is named with both commits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from . import ignored, nested
from .nested import Entry

# Files inside nested repositories named in one review; the rest are counted.
NAMED_MAX = 500
HEAD = "/.git"  # the manifest's key for a repository's HEAD: never a path the walk yields


@dataclass(frozen=True)
class Change:
    path: str
    before: Entry | None
    now: Entry | None


@dataclass(frozen=True)
class Inner:
    repos: tuple[nested.Nested, ...]
    files: tuple[Change, ...]


def current(worktree: Path, previous: Mapping[str, Entry] | None = None) -> nested.Manifest:
    """Every nested repository's files and HEAD now."""
    repos = nested.find(worktree)
    found = nested.manifest(worktree, repos, previous)
    for repo in repos:
        found[repo.path + HEAD] = ("head", 0, 0, 0, 0, 0, repo.head)
    return found


def record(worktree: Path, file: Path) -> None:
    """The baseline the review compares with, written to `file` in the state home."""
    nested.write(file, current(worktree), ignored.record(worktree))


def changes(
    worktree: Path, baseline: Mapping[str, Entry] | None, hidden: Callable[[str], bool]
) -> Inner:
    now = current(worktree, baseline)
    before = baseline or {}
    every = (Change(p, before.get(p), now.get(p)) for p in sorted(set(now) | set(before)))
    found = tuple(c for c in every if not hidden(c.path) and not _same(c.before, c.now))
    return Inner(tuple(nested.find(worktree)), found)


def _same(old: Entry | None, new: Entry | None) -> bool:
    if old is None or new is None:
        return False
    return (old[0], old[1], old[6]) == (new[0], new[1], new[6])


def sections(worktree: Path, inner: Inner, render: Callable[..., str], *, shown: int) -> list[str]:
    """The review's text for `inner`: a file shown whole while `shown` lasts, then named."""
    named = inner.files[:NAMED_MAX]
    parts = [_section(worktree, c, render, full=n < shown) for n, c in enumerate(named)]
    if len(inner.files) > NAMED_MAX:
        parts.append(
            f"# ... and {len(inner.files) - NAMED_MAX} more changes inside nested repositories"
        )
    return parts


def _section(worktree: Path, change: Change, render: Callable[..., str], *, full: bool) -> str:
    path, old, new = change.path, change.before, change.now
    if path.endswith(HEAD):
        repo = path[: -len(HEAD)]
        was = old[6] if old is not None else "none"
        now = new[6] if new is not None else "none"
        return f"# nested repository {repo}/: HEAD {was or 'unreadable'} -> {now or 'unreadable'}"
    where = "# inside a nested repository (read as files; git never runs in it)"
    if new is None:
        assert old is not None  # a change has a side
        return f"diff --git a/{path} b/{path}\n{where}: removed, was {_what(old)}"
    text = render(worktree, path, full=full)
    head, _, rest = text.partition("\n")
    note = f"{where}: changed, was {_what(old)}" if old is not None else f"{where}: new"
    return f"{head}\n{note}\n{rest}"


def _what(entry: Entry) -> str:
    kind, _, size, *_, sha = entry
    if kind == "link":
        return f"a link to {sha!r}"
    return f"{kind}, {size} bytes, sha256 {sha}"
