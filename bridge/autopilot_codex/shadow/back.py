"""Bringing a snapshot back: its files, then the refs it knew that moved since, then the stash.

The present is snapshotted first, so a restore is itself undone by restoring that snapshot.
Files are written by git (`checkout-index` from a temporary index over the shadow), which
never writes through a link in a leading folder; files the snapshot did not have are removed
only when the present snapshot holds them (so an ignored build folder is never touched).
Refs the present has and the snapshot did not (a branch made since) are left alone.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from ..errors import BridgeError
from ..gitrepo.runner import run_bytes
from . import refs
from .history import Snapshot, find
from .repo import Shadow
from .snapshot import take


@dataclass(frozen=True)
class Restored:
    undo: Snapshot  # the present, as it was before the restore
    written: int
    removed: int
    refs: tuple[str, ...]


def restore(shadow: Shadow, ident: str, path: str | None = None) -> Restored:
    _same_repository(shadow)
    target = find(shadow, ident)
    present = take(shadow, "before restore").snapshot
    written, removed = _files(shadow, present, target, path)
    moved = _refs(shadow, target.meta.refs) if path is None else ()
    # What the restore removed is in `present`, not lost: the next hook compares with this.
    take(shadow, f"restored {target.meta.n}", notice=False)
    return Restored(present, written, removed, moved)


def _same_repository(shadow: Shadow) -> None:
    """The repository the work tree's `.git` names now is the one the history was kept for
    (whose objects the shadow borrows, `repo.create`): a `.git` swapped for a `gitdir:` file
    naming another would have its refs, HEAD and stash written by the restore."""
    try:
        kept = (shadow.dir / "objects" / "info" / "alternates").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        kept = "?"
    kept = kept.strip()
    if os.path.realpath(kept) != os.path.realpath(shadow.user.common_dir / "objects"):
        raise BridgeError(
            f"{shadow.worktree}/.git now names another repository ({shadow.user.common_dir}) "
            f"than the one this history was kept for ({kept.removesuffix('/objects')}): "
            "restore refused; put .git back as it was first"
        )


def _files(
    shadow: Shadow, present: Snapshot, target: Snapshot, path: str | None
) -> tuple[int, int]:
    spec = ["--", path] if path else []
    out = shadow.git("diff-tree", "-r", "-z", "--no-renames", present.tree, target.tree, *spec)
    fields = out.split(b"\0")
    write: list[bytes] = []
    remove: list[bytes] = []
    for head, raw in zip(fields[0::2], fields[1::2], strict=False):
        status = head.decode("ascii", "replace").rsplit(" ", 1)[-1]
        (remove if status == "D" else write).append(raw)
    for raw in remove:
        _remove(shadow, os.fsdecode(raw))
    if write:
        index = str(shadow.dir / "restore-index")
        try:
            shadow.git("read-tree", target.tree, index=index)
            shadow.git(
                "checkout-index", "-f", "-z", "--stdin", index=index, stdin=b"\0".join(write)
            )
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index)
    return len(write), len(remove)


def _remove(shadow: Shadow, relative: str) -> None:
    """Remove one file, never through a link in a leading folder; empty folders go too."""
    root = shadow.worktree
    parts = relative.split("/")
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        if folder.is_symlink() or not folder.is_dir():
            return
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        (folder / parts[-1]).unlink()
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            break
        folder = folder.parent


def _refs(shadow: Shadow, want: refs.Refs) -> tuple[str, ...]:
    """Put back every ref that moved or went since the snapshot, HEAD, and its stash entries;
    the objects they need are copied back first (the user may have pruned them)."""
    now = refs.read(shadow.user)
    moved = sorted(n for n, sha in want.refs.items() if n != refs.STASH and now.refs.get(n) != sha)
    stash = [*want.stash, *(e for e in now.stash if e not in want.stash)]
    tips = [want.refs[n] for n in moved] + [sha for sha, _ in want.stash]
    if want.head and not want.head.startswith("ref: "):
        tips.append(want.head)
    if tips:
        wanted = ("\n".join([*tips, "--not", *now.tips()]) + "\n").encode("ascii")
        pack = shadow.git("pack-objects", "--revs", "--stdout", "-q", stdin=wanted)
        run_bytes(shadow.user, "index-pack", "--stdin", stdin=pack)
    if moved:
        lines = "".join(f"update {n} {want.refs[n]}\n" for n in moved)
        run_bytes(shadow.user, "update-ref", "--stdin", stdin=lines.encode("utf-8"))
    head_before = now.head_commit()
    if want.head and want.head != now.head:
        if want.head.startswith("ref: "):
            run_bytes(shadow.user, "symbolic-ref", "HEAD", want.head[5:])
        else:
            run_bytes(shadow.user, "update-ref", "--no-deref", "HEAD", want.head)
    if tuple(stash) != now.stash:
        run_bytes(shadow.user, "update-ref", "-d", refs.STASH, ok_codes=(0, 1))
        for sha, message in stash:
            run_bytes(shadow.user, "update-ref", "--create-reflog", "-m", message, refs.STASH, sha)
    names = [*moved, *(["HEAD"] if want.head != now.head else [])]
    if tuple(stash) != now.stash:
        names.append(refs.STASH)
    if refs.read(shadow.user).head_commit() != head_before:
        # The index follows HEAD; the files were put back above and stay as they are.
        run_bytes(shadow.user, "read-tree", "HEAD")
    return tuple(names)
