"""What vanished between two snapshots that no commit took: a file deleted or put back to the
last commit while its content was in none, a branch deleted or moved back past commits no
other ref holds, a stash entry dropped. The user's work in each case is in the snapshot before.
"""

from __future__ import annotations

from ..errors import BridgeError
from .history import Snapshot
from .refs import STASH, Refs
from .repo import Shadow

SHOWN = 20


def compare(
    shadow: Shadow, before: Snapshot | None, tree: str, now: Refs
) -> tuple[int, tuple[str, ...]]:
    """(how many files changed, what was lost) since `before`."""
    if before is None:
        return 0, ()
    changed, files = _files(shadow, before, tree, now)
    return changed, (*files, *_refs(shadow, before.meta.refs, now))


def _files(shadow: Shadow, before: Snapshot, tree: str, now: Refs) -> tuple[int, list[str]]:
    if tree == before.tree:
        return 0, []
    out = shadow.git("diff-tree", "-r", "-z", "--no-renames", before.tree, tree)
    fields = out.split(b"\0")
    changes: list[tuple[str, str, str]] = []  # (path, blob before, blob now or "")
    for head, raw in zip(fields[0::2], fields[1::2], strict=False):
        parts = head.decode("ascii", "replace").split(" ")
        if len(parts) == 5 and parts[4] in ("D", "M", "T"):
            blob_now = "" if parts[4] == "D" else parts[3]
            changes.append((raw.decode("utf-8", "surrogateescape"), parts[2], blob_now))
    changed = len(fields) // 2
    heads = [c for c in (before.meta.refs.head_commit(), now.head_commit()) if c]
    candidates = [c for c in changes if "\n" not in c[0]]
    if not candidates:
        return changed, []
    committed = _committed(shadow, heads, [c[0] for c in candidates])
    lost = []
    for path, blob_before, blob_now in candidates:
        held = committed.get(path, set())
        if blob_before in held:
            continue  # the content was committed: nothing of the user's is gone
        if not blob_now:
            lost.append(f"{path}: deleted, with changes no commit holds")
        elif blob_now in held:
            lost.append(f"{path}: put back to the last commit, losing changes no commit holds")
    return changed, lost


def _committed(shadow: Shadow, heads: list[str], paths: list[str]) -> dict[str, set[str]]:
    """The blob each path has in each head commit."""
    if not heads:
        return {}
    asked = [(h, p) for h in heads for p in paths]
    query = "".join(f"{h}:{p}\n" for h, p in asked).encode("utf-8", "surrogateescape")
    out = shadow.git("cat-file", "--batch-check=%(objectname)", stdin=query)
    found: dict[str, set[str]] = {}
    for (_, path), line in zip(asked, out.decode("ascii", "replace").splitlines(), strict=False):
        if not line.endswith("missing"):
            found.setdefault(path, set()).add(line.strip())
    return found


def _refs(shadow: Shadow, before: Refs, now: Refs) -> list[str]:
    lost = []
    tips = now.tips()
    for name, sha in sorted(before.refs.items()):
        if name == STASH or now.refs.get(name) == sha:
            continue
        alone = _alone(shadow, sha, tips)
        if alone:
            how = "deleted" if name not in now.refs else "moved"
            commits = "1 commit" if alone == 1 else f"{alone} commits"
            lost.append(f"{name}: {how}, losing {commits} no other ref holds")
    kept = {sha for sha, _ in now.stash}
    for sha, message in before.stash:
        if sha not in kept:
            lost.append(f"stash entry dropped: {message or sha[:12]}")
    return lost


def _alone(shadow: Shadow, sha: str, tips: list[str]) -> int:
    try:
        out = shadow.git("rev-list", "--count", sha, "--not", *tips, "--")
    except BridgeError:
        return 0
    return int(out.decode().strip() or 0)
