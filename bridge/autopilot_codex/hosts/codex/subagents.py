"""The rollouts of a Codex session's subagents, whose spend counts too.

A Codex subagent (`spawn_agent`, multi-agent) runs as a thread of its own and writes a rollout
of its own next to its parent's, `rollout-<time>-<thread id>.jsonl`, whose first line (its
`session_meta`) names the parent as `parent_thread_id`; its token totals are its own, not in
the parent's. Seen on 0.171.0. So at each hook the parent's folder is listed, and the start of
each rollout written to since the loop began is read for the parent it names: subagents of
subagents too. A subagent started on a later day (another folder) is not found.

Standard library only: the hook path imports it.
"""

from __future__ import annotations

import os
import re

# The session_meta line names the parent within its first few kilobytes (before the long
# base instructions).
HEAD = 8192
# Rollouts looked at per hook at most, newest first.
KEPT = 512
_ID = re.compile(rb'"parent_thread_id"\s*:\s*"([0-9a-f-]{36})"')
_OWN = re.compile(r"-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def children(path: str, after: float) -> list[str]:
    """The rollouts in `path`'s folder, changed at or after `after` (epoch seconds), of the
    subagents of the thread that writes `path`, and of theirs."""
    own = _OWN.search(path)
    folder = path.rpartition("/")[0]
    if own is None or not folder:
        return []
    try:
        with os.scandir(folder) as entries:
            found = [
                (entry.stat(follow_symlinks=False).st_mtime, entry.path)
                for entry in entries
                if entry.name.startswith("rollout-") and entry.name.endswith(".jsonl")
                and entry.path != path
            ]
    except OSError:
        return []
    recent = [p for mtime, p in sorted(found, reverse=True)[:KEPT] if mtime >= after]
    parents = {p: _parent(p) for p in recent}
    family, kept = {own.group(1)}, []
    grew = True
    while grew:
        grew = False
        for candidate, parent in parents.items():
            thread = _OWN.search(candidate)
            if parent in family and thread is not None and candidate not in kept:
                family.add(thread.group(1))
                kept.append(candidate)
                grew = True
    return sorted(kept)


def _parent(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return ""
    try:
        head = os.read(fd, HEAD)
    except OSError:
        return ""
    finally:
        os.close(fd)
    first = head.split(b"\n", 1)[0]
    found = _ID.search(first)
    return found.group(1).decode() if found else ""
