"""The repository's refs as a snapshot keeps them: HEAD, every ref, and every stash entry.

Read as data: `for-each-ref` through the runner for the refs, Python for HEAD and the stash's
reflog (the entries under the top one live only there, so dropping one leaves no ref behind).
The implementer writes both files in a session: each is read only as a regular file, of a
bounded size, without waiting (`nofollow.small`), as a fifo or a link to `/dev/zero` there would
hang the snapshot's worker, which holds the shadow's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import nofollow
from ..gitrepo.runner import Location, run_bytes

STASH = "refs/stash"
_HEAD_MAX = 64 * 1024
# A stash's log larger than this (hundreds of thousands of entries) reads as none: the
# snapshots before it keep its entries, and their loss is named.
_STASH_LOG_MAX = 64 * 1024 * 1024


@dataclass(frozen=True)
class Refs:
    head: str = ""  # "ref: refs/heads/main", or a commit id when detached
    refs: dict[str, str] = field(default_factory=dict)
    stash: tuple[tuple[str, str], ...] = ()  # (commit, message), oldest first

    def head_commit(self) -> str:
        if self.head.startswith("ref: "):
            return self.refs.get(self.head[5:], "")
        return self.head

    def tips(self) -> list[str]:
        found = [*self.refs.values(), *(sha for sha, _ in self.stash)]
        if self.head and not self.head.startswith("ref: "):
            found.append(self.head)
        return sorted(set(found))

    def as_json(self) -> dict[str, Any]:
        return {"head": self.head, "refs": self.refs, "stash": [list(e) for e in self.stash]}

    @classmethod
    def of_json(cls, data: object) -> Refs:
        if not isinstance(data, dict):
            return cls()
        refs = data.get("refs")
        stash = data.get("stash")
        return cls(
            str(data.get("head", "")),
            {str(k): str(v) for k, v in refs.items()} if isinstance(refs, dict) else {},
            tuple((str(e[0]), str(e[1])) for e in stash if isinstance(e, list) and len(e) == 2)
            if isinstance(stash, list)
            else (),
        )


def read(user: Location) -> Refs:
    out = run_bytes(user, "for-each-ref", "--format=%(objectname) %(refname)")
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    refs = {name: sha for sha, _, name in (line.partition(" ") for line in lines)}
    # An old git could keep HEAD as a link (`core.preferSymlinkRefs`): followed, to a regular file.
    head = nofollow.small(user.git_dir / "HEAD", _HEAD_MAX, follow=True) or b""
    return Refs(head.decode("utf-8", "replace").strip(), refs, stash_entries(user))


def stash_entries(user: Location) -> tuple[tuple[str, str], ...]:
    data = nofollow.small(user.common_dir / "logs" / STASH, _STASH_LOG_MAX)
    if data is None:
        return ()
    text = data.decode("utf-8", "replace")
    found = []
    for line in text.splitlines():
        fields, _, message = line.partition("\t")
        parts = fields.split(" ")
        if len(parts) >= 2 and len(parts[1]) >= 40 and parts[1].strip("0"):
            found.append((parts[1], message))
    return tuple(found)
