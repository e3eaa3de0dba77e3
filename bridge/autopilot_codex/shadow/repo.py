"""The shadow's git directory: where it is, how it is made, and how git runs over it.

Git runs through the bridge's one runner (`gitrepo.runner.run_bytes`) with `--git-dir` the shadow
and `--work-tree` the user's worktree: the shadow's own config is the bridge's, so nothing of
the user's config applies to it; `info/attributes` switches off every conversion, so the bytes
kept are the bytes on disk. `objects/info/alternates` names the user's object store, so a file
git already holds costs no copy; what a snapshot needs is then copied in (`snapshot._keep`),
because the user may delete a branch and prune.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..fileio import acquire, release
from ..gitrepo.runner import Location, locate, run_bytes
from ..paths import project_dir

NAME = "shadow.git"
HEAD_REF = "refs/heads/snapshots"
# No conversion of any kind between the work tree and what is kept (CRLF, encodings, filters,
# `ident`): a restore must give back every byte.
ATTRIBUTES = "* -text -ident -filter -working-tree-encoding -diff -merge\n"
LOCKS = ("index.lock", "restore-index.lock", "refs/heads/snapshots.lock", "packed-refs.lock")


@dataclass(frozen=True)
class Shadow:
    """One worktree's shadow history."""

    worktree: Path
    dir: Path
    user: Location

    @property
    def where(self) -> Location:
        return Location(self.worktree, self.dir, self.dir)

    @property
    def index(self) -> str:
        """The snapshots' own index: kept between snapshots, so an unchanged file costs a stat."""
        return str(self.dir / "index")

    def git(
        self,
        *args: str,
        stdin: bytes | None = None,
        index: str | None = None,
        ok: tuple[int, ...] = (0,),
        author: Mapping[str, str] | None = None,
    ) -> bytes:
        index = index or self.index
        return run_bytes(
            self.where, *args, stdin=stdin, index_file=index, ok_codes=ok, author=author
        )

    def excluded(self) -> list[str]:
        """Pathspecs that keep the state home out when it sits inside the worktree."""
        try:
            inside = self.dir.parent.parent.parent.resolve().relative_to(self.worktree.resolve())
        except ValueError:
            return []
        return [f":(exclude,top){inside.as_posix()}"]


def at(worktree: Path, home: Path | None = None) -> Shadow:
    user = locate(worktree)
    return Shadow(user.work_tree, project_dir(user.work_tree, home) / NAME, user)


def exists(shadow: Shadow) -> bool:
    return (shadow.dir / "HEAD").is_file()


def create(shadow: Shadow) -> None:
    """A bare repository made by hand (no `git init`: it would copy templates, hooks among
    them); written in a temp folder and renamed, so a crash leaves none or a whole one."""
    if exists(shadow):
        return
    shadow.dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = shadow.dir.with_name(f".{NAME}.{os.getpid()}.tmp")
    for sub in ("objects/info", "objects/pack", "refs/heads", "info"):
        (tmp / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
    (tmp / "HEAD").write_text(f"ref: {HEAD_REF}\n", encoding="utf-8")
    (tmp / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[gc]\n\tauto = 0\n",
        encoding="utf-8",
    )
    (tmp / "info" / "attributes").write_text(ATTRIBUTES, encoding="utf-8")
    objects = shadow.user.common_dir / "objects"
    (tmp / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
    try:
        tmp.rename(shadow.dir)
    except OSError:
        if not exists(shadow):
            raise


def hold(shadow: Shadow, timeout: float) -> int:
    """Take the shadow's lock (one writer at a time: hooks run in parallel) and return its
    descriptor. Whoever holds it knows git's own lock files are left over from a writer that
    died (kill -9), and removes them. The lock is `flock`'s, so a child given the descriptor
    holds it on (`background`)."""
    shadow.dir.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(shadow.dir.parent / "shadow.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        acquire(fd, timeout)
    except BaseException:
        os.close(fd)
        raise
    for name in LOCKS:
        with contextlib.suppress(OSError):
            os.unlink(shadow.dir / name)
    return fd


@contextlib.contextmanager
def locked(shadow: Shadow, timeout: float) -> Iterator[None]:
    fd = hold(shadow, timeout)
    try:
        yield
    finally:
        release(fd)
        os.close(fd)


def settle(shadow: Shadow, timeout: float) -> None:
    """Wait until no snapshot is being written (one started in the background)."""
    with locked(shadow, timeout):
        pass
