"""The repository's refs as a snapshot keeps them: HEAD, every ref, and every stash entry.

Read as data: `for-each-ref` through the runner for the refs, Python for HEAD and the stash's
reflog (the entries under the top one live only there, so dropping one leaves no ref behind).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fileio import read_text
from ..gitrepo.runner import Location, run_bytes

STASH = "refs/stash"


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
    refs = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        sha, _, name = line.partition(" ")
        refs[name] = sha
    head = (read_text(user.git_dir / "HEAD") or "").strip()
    return Refs(head, refs, stash_entries(user))


def stash_entries(user: Location) -> tuple[tuple[str, str], ...]:
    try:
        text = (user.common_dir / "logs" / STASH).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    found = []
    for line in text.splitlines():
        fields, _, message = line.partition("\t")
        parts = fields.split(" ")
        if len(parts) >= 2 and len(parts[1]) >= 40 and parts[1].strip("0"):
            found.append((parts[1], message))
    return tuple(found)
