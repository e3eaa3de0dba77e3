"""The snapshots already kept: the newest, one by id, and the whole list.

Each snapshot is a commit in the shadow whose first parent is the one before; its message is a
title and one JSON object (what `Meta` holds). `refs/heads/snapshots` moves only once a snapshot
and every object it needs are written, so a snapshot a crash cut short is never the newest.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .. import surrogates
from ..errors import BridgeError
from .refs import Refs
from .repo import HEAD_REF, Shadow, exists

TITLE = "autopilot-codex snapshot"


@dataclass(frozen=True)
class Meta:
    n: int
    point: str
    at: float
    iteration: int | None = None
    changed: int = 0
    lost: tuple[str, ...] = ()
    refs: Refs = field(default_factory=Refs)

    def message(self) -> str:
        body = {
            "n": self.n,
            "point": self.point,
            "at": self.at,
            "iteration": self.iteration,
            "changed": self.changed,
            "lost": list(self.lost),
            **self.refs.as_json(),
        }
        return f"{TITLE} {self.n} ({self.point})\n\n{json.dumps(body, sort_keys=True)}\n"

    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.at))


@dataclass(frozen=True)
class Snapshot:
    commit: str
    tree: str
    meta: Meta


def parse(commit: str, raw: bytes) -> Snapshot:
    """One `cat-file commit` body (headers, blank line, message) as a Snapshot."""
    text = raw.decode("utf-8", "surrogateescape")
    headers, _, message = text.partition("\n\n")
    tree = next((h[5:] for h in headers.splitlines() if h.startswith("tree ")), "")
    return Snapshot(commit, tree, _meta(message))


def _meta(message: str) -> Meta:
    _, _, body = message.partition("\n\n")
    try:
        data: dict[str, Any] = surrogates.loads(body)
    except ValueError:
        data = {}
    iteration = data.get("iteration")
    return Meta(
        n=int(data.get("n", 0)),
        point=str(data.get("point", "?")),
        at=float(data.get("at", 0.0)),
        iteration=iteration if isinstance(iteration, int) else None,
        changed=int(data.get("changed", 0)),
        lost=tuple(str(x) for x in data.get("lost", ())),
        refs=Refs.of_json(data),
    )


def latest_commit(shadow: Shadow) -> str | None:
    """Read as a file: the shadow's refs are never packed, so a ref is a file of one id."""
    try:
        sha = (shadow.dir / HEAD_REF).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return sha or None


def latest(shadow: Shadow) -> Snapshot | None:
    commit = latest_commit(shadow) if exists(shadow) else None
    if commit is None:
        return None
    return parse(commit, shadow.git("cat-file", "commit", commit))


def every(shadow: Shadow) -> list[Snapshot]:
    """Newest first."""
    commit = latest_commit(shadow) if exists(shadow) else None
    if commit is None:
        return []
    out = shadow.git("log", "--first-parent", "-z", "--format=%H %T%n%B", commit)
    found = []
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        head, _, message = record.strip("\n").partition("\n")
        sha, _, tree = head.partition(" ")
        if sha:
            found.append(Snapshot(sha, tree, _meta(message)))
    return found


def find(shadow: Shadow, ident: str) -> Snapshot:
    """A snapshot by its number (`12`) or a prefix of its commit id."""
    for snap in every(shadow):
        if ident == str(snap.meta.n) or (len(ident) >= 7 and snap.commit.startswith(ident)):
            return snap
    raise BridgeError(f"no snapshot {ident!r} here: `autopilot-codex restore --list` shows them")
