"""Repositories inside the work tree, read as data: git never runs with one as its git dir.

A nested repository (a folder with its own `.git`, staged as a gitlink or not) or a submodule
carries its own config, which the implementer can write: a git started inside it, or a git of
the top repository that descends into it (a status of a gitlink runs one), runs the filters,
fsmonitor and hooks that config names, as the user, outside any wall. So the bridge and the
driver never enter one (runner.py: `--ignore-submodules=all` and its kin): which there are
comes from two listings of the top repository, and a nested one's HEAD and files are read here
in Python. Only a commit id is ever returned for a HEAD, so a `.git` file pointing elsewhere
cannot make the bridge print another file. The manifest recorded when the loop starts (in the
state home, out of the implementer's reach) keeps each entry's stat, ctime included, which no
write can keep, so an unchanged file is not read again.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import nofollow, surrogates, treewalk
from ..fileio import atomic_write
from .runner import run_bytes

_GITLINK = b"160000"
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_SMALL = 64 * 1024  # HEAD, a ref, a `.git` file: never more than this is read

# One file's record: kind, mode, size, mtime_ns, ctime_ns, inode, sha256 (a link: its target).
Entry = tuple[str, int, int, int, int, int, str]
Manifest = dict[str, Entry]


@dataclass(frozen=True)
class Nested:
    """One repository inside the work tree."""

    path: str  # relative to the top work tree, no trailing slash
    kind: str  # "submodule" (a gitlink in the top index) or "repository" (untracked)
    head: str  # its HEAD commit read from its files; "" when there is none to read


STAGE = ("ls-files", "--stage", "-z")
OTHERS = ("ls-files", "--others", "--exclude-per-directory=.gitignore", "-z")


def find(worktree: Path) -> list[Nested]:
    """The gitlinks of the top index and the untracked folders holding a `.git`."""
    return found(worktree, run_bytes(worktree, *STAGE), run_bytes(worktree, *OTHERS))


def found(worktree: Path, stage: bytes, others: bytes) -> list[Nested]:
    """`find` from the output of the two listings (STAGE, OTHERS), read already."""
    kinds: dict[str, str] = {}
    for entry in stage.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if meta.startswith(_GITLINK + b" ") and name:
            kinds[os.fsdecode(name)] = "submodule"
    for name in others.split(b"\0"):
        if name.endswith(b"/"):
            kinds.setdefault(os.fsdecode(name.rstrip(b"/")), "repository")
    return [Nested(p, kind, head(worktree / p)) for p, kind in sorted(kinds.items())]


def small(path: Path) -> str:
    """A small regular file's text; "" for anything else (a link, a fifo, a folder), its type
    taken from the file opened, so a fifo swapped in after a look cannot hang the read."""
    return (nofollow.small(path, _SMALL) or b"").decode("utf-8", "replace")


def git_dir(folder: Path) -> Path | None:
    """The git directory of the repository in `folder`: its `.git` folder or what its `.git`
    file names; None when there is neither."""
    dot = folder / ".git"
    try:
        info = dot.lstat()
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot
    line = small(dot).strip()
    if not line.startswith("gitdir:"):
        return None
    return folder / line[len("gitdir:") :].strip()


def head(folder: Path) -> str:
    """HEAD's commit id, read from the files of the repository in `folder`; "" when unknown."""
    where = git_dir(folder)
    if where is None:
        return ""
    pointer = small(where / "commondir").strip()
    common = where / pointer if pointer else where
    value = small(where / "HEAD").strip()
    for _ in range(5):  # a symbolic ref may name another; git stops at five as well
        if not value.startswith("ref:"):
            break
        ref = value[len("ref:") :].strip()
        if ".." in ref.split("/") or not ref.startswith("refs/"):
            return ""
        value = small(where / ref).strip() or small(common / ref).strip() or _packed(common, ref)
    return value if _SHA.fullmatch(value) else ""


def _packed(common: Path, ref: str) -> str:
    for line in small(common / "packed-refs").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref:
            return sha
    return ""


def scan(root: Path, folder: str, previous: Mapping[str, Entry] | None = None) -> Manifest:
    """Every file under `root/folder` (no `.git` entered, no link followed), by path relative
    to `root`. An entry whose stat equals its `previous` record keeps that record's hash."""
    found: Manifest = {}
    for rel, info in walk(root, folder):
        mode = stat.S_IFMT(info.st_mode)
        known = (previous or {}).get(rel)
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        if known is not None and known[0] != "special" and known[2:6] == key:
            found[rel] = known
            continue
        if mode == stat.S_IFLNK:
            kind, digest = "link", _target(root, rel)
        elif mode == stat.S_IFREG:
            kind, digest = "file", nofollow.sha256(root, rel)
        else:
            # Never open a fifo or a device: reading one can block or never end.
            kind, digest = "special", str(mode)
        found[rel] = (kind, info.st_mode & 0o777, *key, digest)
    return found


def walk(root: Path, folder: str) -> Iterator[tuple[str, os.stat_result]]:
    """Files under `root/folder`, no `.git` entered, each folder opened inside `root` without
    following a link (a submodule's folder swapped for a link to `~/.ssh` lists nothing). At a
    loop's start, from its one walk of the tree (`treewalk.shared`)."""
    tree = treewalk.sharing(root)
    if tree is None or folder not in tree.repos:
        tree = treewalk.walk(root, folder)
    prefix = folder + "/"
    for rel, info in tree.stats.items():
        inside = rel[len(prefix) :].split("/")
        if rel.startswith(prefix) and not stat.S_ISDIR(info.st_mode) and ".git" not in inside:
            yield rel, info


def _target(root: Path, rel: str) -> str:
    try:
        return nofollow.readlink(root, rel)
    except (OSError, nofollow.LinkRefused) as exc:
        return f"unreadable {getattr(exc, 'errno', 'link')}"


def manifest(
    worktree: Path, nested: list[Nested], previous: Mapping[str, Entry] | None = None
) -> Manifest:
    """The files of every nested repository, one manifest."""
    return {rel: e for repo in nested for rel, e in scan(worktree, repo.path, previous).items()}


def digest(worktree: Path, repos: list[Nested]) -> bytes:
    """One line per nested repository and per file in it: what changes when any byte does."""
    lines: list[bytes] = []
    for repo in repos:
        lines.append(f"nested {repo.kind} {repo.head}".encode() + b"\0" + os.fsencode(repo.path))
        for rel, entry in sorted(scan(worktree, repo.path).items()):
            kind, mode, size, *_, sha = entry
            lines.append(
                os.fsencode(rel) + f"\0{kind} {mode:o} {size} ".encode() + os.fsencode(sha)
            )
    return b"\0".join(lines)


def write(file: Path, data: Manifest, ignored: Mapping[str, list[object]]) -> None:
    """The baseline: nested files and ignored files' stats, written whole to `file`."""
    atomic_write(file, json.dumps({"files": data, "ignored": ignored}), sync=False)


def load(file: Path) -> tuple[Manifest, dict[str, tuple[object, ...]]] | None:
    """A recorded baseline (nested files, ignored files' stats); None when there is none or it
    is unreadable (then every file of a nested repository is shown as new)."""
    try:
        raw = surrogates.loads(file.read_text(encoding="utf-8"))
        files = {str(k): _entry(v) for k, v in raw["files"].items()}
        ignored = {str(k): _stat(v) for k, v in raw["ignored"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return files, ignored


def _stat(value: object) -> tuple[object, ...]:
    """An ignored file's record: five numbers of its stat, then its digest."""
    if not isinstance(value, list) or len(value) != 6:
        raise ValueError("not an ignored file's record")
    # Not converted field by field (10,000 of them): a value of the wrong type compares
    # unequal to the file's stat, so the file is read and named, which is safe.
    return tuple(value)


def _entry(value: object) -> Entry:
    if not isinstance(value, list) or len(value) != 7:
        raise ValueError("not a manifest entry")
    kind, mode, size, mtime, ctime, ino, sha = value
    return (str(kind), int(mode), int(size), int(mtime), int(ctime), int(ino), str(sha))
