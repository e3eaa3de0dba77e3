"""An index of the bridge's own for git's reads of the work tree.

git reads a tracked file only when its stat differs from what the index recorded; otherwise it
takes the index's blob for the file's content. The implementer writes `.git/index` (staging is
its work), so it can give an edited file's entry the edited file's stat and the old blob, and
`git status` and `git diff <base>` then show no change at all: the review sees nothing and the
checks' digest keeps the tree the checks passed on.

So the reads that compare the work tree (the review's diffs, the checks' digest) go through a
copy kept in the state home: the same entries (mode, blob, stage, path) as the user's index,
read with `ls-files --stage`, which shows no stat, but stat data that only the bridge's git
wrote, each after hashing the file (`update-index --refresh`). An entry the user's index adds
or changes enters with no stat and is hashed once; the flags, the untracked cache and any other
extension of the user's index never enter. Each change is made in a copy and renamed into place,
so a read running meanwhile keeps the index it opened.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path

from ..paths import project_dir
from .runner import locate, run_bytes

STAGE = ("ls-files", "--stage", "-z")
FOLDER = "git-index"
# Copies kept, the newest first: one per state of the user's index seen lately. A read that
# chose a copy just before it was pruned finds none, and sees every file as changed.
KEPT = 8


def own_index(root: Path) -> str | None:
    """The path of an index holding the user's index's entries with the bridge's stat data
    (None, the user's own index, only where the state home cannot be written: no loop runs).

    Each copy is named by the digest of the user's index file it was made from, so an index
    unchanged since costs no git call; any other is made from the newest copy, then kept."""
    folder = project_dir(root) / FOLDER
    source = locate(root).git_dir / "index"
    digest = _digest(source)
    named = folder / f"index-{digest}"
    if digest and named.is_file():
        return str(named)
    # Only here: a hook whose index is unchanged loads neither (the cold path's imports).
    import shutil
    import tempfile

    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix="sync-", dir=folder))
    except OSError:
        return None
    index = str(scratch / "index")
    try:
        entries = run_bytes(root, *STAGE)
        if not digest or _digest(source) != digest:  # used once, never found by its name
            named = folder / f"index-once-{scratch.name}"
        copies = _copies(folder)
        if copies:
            shutil.copyfile(copies[0], index)
            had = run_bytes(root, *STAGE, index_file=index)
        else:
            run_bytes(root, "read-tree", "--empty", index_file=index)
            had = b""
        changes = _changes(had, entries)
        if changes:
            run_bytes(root, "update-index", "-z", "--index-info", index_file=index, stdin=changes)
        # Records the stat of each entry whose file matches its blob, hashed by git here.
        args = ("update-index", "-q", "--ignore-submodules", "--refresh")
        run_bytes(root, *args, ok_codes=(0, 1), index_file=index)
        os.replace(index, named)
        for old in _copies(folder)[KEPT:]:
            with contextlib.suppress(OSError):
                old.unlink()
        return str(named)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _digest(path: Path) -> str:
    """The user's index file's bytes as a digest; "" for a link, a fifo or a device (never
    read as a file: reading a fifo would wait forever), whose copy is never found again."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return hashlib.sha256(b"").hexdigest()[:32]
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return hashlib.sha256(file.read()).hexdigest()[:32]


def _copies(folder: Path) -> list[Path]:
    """The kept copies, the newest first."""
    found: list[tuple[int, Path]] = []
    for path in folder.glob("index-*"):
        with contextlib.suppress(OSError):
            found.append((path.stat().st_mtime_ns, path))
    return [path for _, path in sorted(found, reverse=True)]


def _changes(had: bytes, entries: bytes) -> bytes:
    """`--index-info` lines turning the entries `had` into `entries`: the paths that differ
    removed (mode 0, all their stages), then their new entries added, with no stat."""
    old = set(filter(None, had.split(b"\0")))
    new = set(filter(None, entries.split(b"\0")))
    lines: list[bytes] = []
    for line in sorted(old - new):
        _, _, path = line.partition(b"\t")
        blob = line.split(b" ")[1]
        lines.append(b"0 " + b"0" * len(blob) + b"\t" + path)
    lines += sorted(new - old)
    return b"".join(line + b"\0" for line in lines)
