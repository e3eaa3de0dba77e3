"""A digest of the working tree as the checks would see it, without writing anything.

HEAD's commit plus, for every path `git status` reports as differing from it (staged,
unstaged, deleted, untracked but not ignored), its kind, mode and content. Reading only what
differs makes an unchanged tree cost one `git status`; `--no-optional-locks` keeps git from
refreshing the user's index. Untracked files come from `ls-files` with the in-tree
`.gitignore` files only: a file hidden by `.git/info/exclude` or `core.excludesFile` still
changes the digest; so do paths flagged skip-worktree or assume-unchanged, read from disk. The alternative, `git add -A` into a temporary index and
`git write-tree`, is about as fast but writes every untracked file into the object store.

Submodules and nested repositories are never entered by git (their own config would run):
their HEAD and every file in them are read as bytes in Python (gitrepo/nested.py), so an
edit inside one changes the digest.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .. import nofollow
from ..errors import BridgeError
from ..gitrepo import basestore, nested, run_bytes, statcache


def tree_hash(worktree: Path, *, exclude: tuple[str, ...] = ()) -> str:
    """The digest, or "" when git cannot tell (not a repository, git missing, HEAD's objects
    forged before the bridge first copied them): never cached."""
    # HEAD's commit and trees as the bridge hashed them (gitrepo/basestore.py): a rewritten
    # tree object of HEAD's would hide a staged edit from the status below.
    commit = _git(worktree, "rev-parse", "--verify", "-q", "HEAD^{commit}", ok=(0, 1))
    try:
        store = basestore.objects(worktree, commit.decode("ascii").strip()) if commit else None
    except (BridgeError, UnicodeDecodeError):
        return ""
    # Through the bridge's own stat data: the index's can be forged to hide an edit.
    status = ("status", "--porcelain=v2", "-z", "--branch", "--untracked-files=no")
    quiet = ("--no-renames", "--ignore-submodules=all")
    out = _git(worktree, "--no-optional-locks", *status, *quiet, own=True, objects=store)
    # Untracked files by the in-tree .gitignore files alone: status would also apply
    # `.git/info/exclude`, which the implementer can write.
    others = _git(worktree, *nested.OTHERS)
    stage = _git(worktree, *nested.STAGE)
    # Skip-worktree ("S") and assume-unchanged (lowercase) entries: status trusts the index
    # for them, so an edit under either flag would keep the digest.
    tagged = _git(worktree, "ls-files", "-v", "-z")
    if out is None or others is None or tagged is None or stage is None:
        return ""
    inner = nested.digest(worktree, nested.found(worktree, stage, others))
    out += b"".join(b"? " + name + b"\0" for name in others.split(b"\0") if name)
    for entry in tagged.split(b"\0"):
        if entry[:1] == b"S" or entry[:1].islower():
            out += b"? " + entry[2:] + b"\0"
    digest = hashlib.sha256()
    # By path alone: the same path moves between kinds of entry when it is staged.
    for head, sub, path in sorted(_entries(out), key=lambda e: (not e[0], e[2])):
        if head:
            digest.update(b"head\0" + sub + b"\0")
        elif not _excluded(path, exclude):
            # The field says "N..." for anything but a submodule, staged or not: not content.
            flags = sub if sub.startswith(b"S") else b""
            digest.update(path + b"\0" + flags + b"\0" + _describe(worktree, path) + b"\0")
    digest.update(b"nested\0" + inner)
    return digest.hexdigest()


def _entries(out: bytes) -> list[tuple[bool, bytes, bytes]]:
    """(is the HEAD line, submodule field or HEAD commit, path) from `status --porcelain=v2 -z`."""
    fields = out.split(b"\0")
    entries: list[tuple[bool, bytes, bytes]] = []
    i = 0
    while i < len(fields):
        line = fields[i]
        i += 1
        kind = line[:2]
        if line.startswith(b"# branch.oid "):
            entries.append((True, line[len(b"# branch.oid ") :], b""))
        elif kind == b"1 ":
            parts = line.split(b" ", 8)
            entries.append((False, parts[2], parts[8]))
        elif kind == b"2 ":  # pragma: no cover - `status --no-renames` never writes one
            parts = line.split(b" ", 9)
            entries.append((False, parts[2], parts[9]))
            i += 1  # the rename's original path follows in its own field
        elif kind == b"u ":
            parts = line.split(b" ", 10)
            entries.append((False, parts[2], parts[10]))
        elif kind == b"? ":
            entries.append((False, b"", line[2:]))
    return entries


def _describe(worktree: Path, path: bytes) -> bytes:
    """Kind, mode and content digest of one path as it is on disk now, read inside the work
    tree: a link, at the path or at a folder on the way, is never followed."""
    rel = os.fsdecode(path.rstrip(b"/"))
    try:
        info = nofollow.lstat(worktree, rel)
        if stat.S_ISLNK(info.st_mode):
            return b"link " + os.fsencode(nofollow.readlink(worktree, rel))
    except FileNotFoundError:
        return b"deleted"
    except nofollow.LinkRefused:
        return b"behind a link"
    except OSError as exc:  # replaced since the lstat, or unreadable
        return f"unreadable {exc.errno}".encode()
    if stat.S_ISDIR(info.st_mode):
        # A submodule or a nested repository: its files are in the nested part of the digest.
        return b"repo"
    if not stat.S_ISREG(info.st_mode):
        # Never open a fifo or a device: reading one can block or never end.
        return f"special {stat.S_IFMT(info.st_mode)}".encode()
    executable = b"755" if info.st_mode & stat.S_IXUSR else b"644"
    return b"file " + executable + b" " + nofollow.sha256(worktree, rel).encode()


def _excluded(path: bytes, exclude: tuple[str, ...]) -> bool:
    text = os.fsdecode(path)
    return any(text == e or text.startswith(e.rstrip("/") + "/") for e in exclude)


def _git(
    cwd: Path,
    *args: str,
    own: bool = False,
    objects: Path | None = None,
    ok: tuple[int, ...] = (0,),
) -> bytes | None:
    """Through the hardened runner: a status would otherwise run the repository's fsmonitor.
    `own`: with the bridge's own stat data (gitrepo/statcache.py), not the index's;
    `objects`: the bridge's own object store first (gitrepo/basestore.py)."""
    try:
        index = statcache.own_index(cwd) if own else None
        return run_bytes(cwd, *args, index_file=index, objects=objects, ok_codes=ok)
    except BridgeError:
        return None
