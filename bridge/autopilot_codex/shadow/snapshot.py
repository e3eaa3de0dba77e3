"""Writing one snapshot: stage the work tree into the shadow's own index, write a tree, and
commit it with the refs, only when something changed.

An unchanged tree costs git's stat walk over the shadow's kept index (nothing is rehashed) and
one `write-tree`; an edit hook names its files and stages only those. Ignored files are kept
when small: a single ignored file up to IGNORED_FILE_MAX bytes, at most IGNORED_TOTAL_MAX new
bytes of them a snapshot; an ignored folder (build outputs, `node_modules`, `.venv`) never.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BridgeError
from . import loss, refs
from .history import Meta, Snapshot, latest
from .repo import HEAD_REF, Shadow, create, locked

IGNORED_FILE_MAX = 1024 * 1024
IGNORED_TOTAL_MAX = 32 * 1024 * 1024
AUTHOR = {
    "GIT_AUTHOR_NAME": "autopilot-codex",
    "GIT_AUTHOR_EMAIL": "autopilot-codex@localhost",
    "GIT_COMMITTER_NAME": "autopilot-codex",
    "GIT_COMMITTER_EMAIL": "autopilot-codex@localhost",
}


@dataclass(frozen=True)
class Taken:
    """What one call did: the newest snapshot (new or unchanged) and what vanished since the
    one before it."""

    snapshot: Snapshot
    new: bool
    lost: tuple[str, ...] = ()


def take(
    shadow: Shadow,
    point: str,
    *,
    iteration: int | None = None,
    paths: Sequence[str] | None = None,
    timeout: float = 10.0,
    notice: bool = True,
) -> Taken:
    """Snapshot the work tree now. `paths`: only these files changed (an edit tool's), so only
    they are staged and the refs are taken from the snapshot before."""
    create(shadow)
    with locked(shadow, timeout):
        return take_held(shadow, point, iteration=iteration, paths=paths, notice=notice)


def take_held(
    shadow: Shadow,
    point: str,
    *,
    iteration: int | None = None,
    paths: Sequence[str] | None = None,
    notice: bool = True,
) -> Taken:
    """`take` by a caller that holds the shadow's lock already (`background`)."""
    create(shadow)
    before = latest(shadow)
    if paths is not None and before is not None:
        _stage_paths(shadow, paths)
        now_refs = before.meta.refs
    else:
        _stage_all(shadow)
        now_refs = refs.read(shadow.user)
    tree = shadow.git("write-tree").decode().strip()
    if before is not None and tree == before.tree and now_refs == before.meta.refs:
        return Taken(before, new=False)
    changed, lost = loss.compare(shadow, before, tree, now_refs)
    lost = lost if notice else ()
    meta = Meta(
        n=before.meta.n + 1 if before else 1,
        point=point,
        at=time.time(),
        iteration=iteration,
        changed=changed,
        lost=lost,
        refs=now_refs,
    )
    parents = ["-p", before.commit] if before else []
    message = meta.message().encode("utf-8")
    out = shadow.git("commit-tree", tree, *parents, stdin=message, author=AUTHOR)
    commit = out.decode().strip()
    _keep(shadow, commit, now_refs, before)
    shadow.git("update-ref", HEAD_REF, commit, before.commit if before else "")
    return Taken(Snapshot(commit, tree, meta), new=True, lost=lost)


def _stage_paths(shadow: Shadow, paths: Sequence[str]) -> None:
    root = shadow.worktree.resolve()
    inside = []
    for path in paths:
        full = _real_parent(root / path)
        if full != root and full.is_relative_to(root):
            inside.append(full.relative_to(root).as_posix())
    if inside:
        names = b"\0".join(p.encode("utf-8", "surrogateescape") for p in inside)
        shadow.git("update-index", "--add", "--remove", "-z", "--stdin", stdin=names)


def _stage_all(shadow: Shadow) -> None:
    """Tracked and untracked files as git would list them (the `.gitignore` files honoured,
    `.git/info/exclude` not: the shadow is another repository), then the small ignored ones.
    A nested repository is never entered: git stages it as a link to its commit, or (one
    without a commit) not at all, which `--ignore-errors` lets the rest survive, as it lets
    a file nobody may read."""
    excluded = shadow.excluded()
    shadow.git("add", "-A", "--ignore-errors", "--", ".", *excluded, ok=(0, 1))
    _stage_ignored(shadow, excluded)


def _stage_ignored(shadow: Shadow, excluded: list[str]) -> None:
    args = ("-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", ".")
    out = shadow.git("ls-files", *args, *excluded)
    room = IGNORED_TOTAL_MAX
    chosen = []
    for raw in out.split(b"\0"):
        if not raw or raw.endswith(b"/"):
            continue  # an ignored folder: build outputs are not kept
        try:
            size = (shadow.worktree / os.fsdecode(raw)).lstat().st_size
        except OSError:
            continue
        if size <= IGNORED_FILE_MAX and size <= room:
            room -= size
            chosen.append(raw)
    if chosen:
        shadow.git("update-index", "--add", "-z", "--stdin", stdin=b"\0".join(chosen))


def _keep(shadow: Shadow, commit: str, now: refs.Refs, before: Snapshot | None) -> None:
    """Copy into the shadow every object the new snapshot and the refs need that the one
    before did not (the user's store is only borrowed: they may prune it), and name each tip
    under `refs/kept/`, so nothing the shadow holds is ever unreachable in it."""
    old = [before.commit, *before.meta.refs.tips()] if before else []
    new = [t for t in now.tips() if t not in set(old)]
    wanted = "\n".join([commit, *new, "--not", *old]) + "\n"
    pack = str(shadow.dir / "objects" / "pack" / "pack")
    shadow.git("pack-objects", "--revs", "-q", "--window=0", pack, stdin=wanted.encode("ascii"))
    if new:
        lines = "".join(f"update refs/kept/{t} {t}\n" for t in new)
        shadow.git("update-ref", "--stdin", stdin=lines.encode("ascii"))


def path_of(shadow: Shadow, path: str) -> str:
    """A path as the shadow names it: relative to the worktree, with `/`."""
    full = _real_parent(Path.cwd() / path)
    try:
        return full.relative_to(shadow.worktree.resolve()).as_posix()
    except ValueError as exc:
        raise BridgeError(f"{path} is not inside {shadow.worktree}") from exc


def _real_parent(path: Path) -> Path:
    """The folder resolved, the name not: a link is kept as a link, wherever it points."""
    path = Path(os.path.normpath(path))
    return path.parent.resolve() / path.name
