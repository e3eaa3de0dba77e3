"""The rollouts of a Codex session's subagents, whose spend counts too.

A Codex subagent (`spawn_agent`, multi-agent) runs as a thread of its own and writes a rollout
of its own next to its parent's, `rollout-<time>-<thread id>.jsonl`, whose first line (its
`session_meta`) names the parent as `parent_thread_id`; its token totals are its own, not in
the parent's. Seen on 0.171.0. So at each hook the parent's folder is listed, and the start of
each rollout written to since the loop began is read for the parent it names: subagents of
subagents too. Codex files a rollout under the day it starts (`sessions/YYYY/MM/DD`), so a
subagent started on a later day is in a later folder: the days after the parent's, up to
today, are listed too (at most `DAYS` of them).

Standard library only: the hook path imports it.
"""

from __future__ import annotations

import datetime
import os
import re
import time

# The session_meta line names the parent within its first few kilobytes (before the long
# base instructions).
HEAD = 8192
# Rollouts looked at per hook at most, newest first.
KEPT = 512
_ID = re.compile(rb'"parent_thread_id"\s*:\s*"([0-9a-f-]{36})"')
_OWN = re.compile(r"-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")
_DAY = re.compile(r"^(.*)/(\d{4})/(\d{2})/(\d{2})$")
# Later days' folders looked at, past the parent's: a loop runs for days, not months.
DAYS = 31


def children(path: str, after: float) -> list[str]:
    """The rollouts in `path`'s folder, changed at or after `after` (epoch seconds), of the
    subagents of the thread that writes `path`, and of theirs."""
    own = _OWN.search(path)
    folder = path.rpartition("/")[0]
    if own is None or not folder:
        return []
    found: list[tuple[float, str]] = []
    for day in _days(folder):
        try:
            with os.scandir(day) as entries:
                found += [
                    (entry.stat(follow_symlinks=False).st_mtime, entry.path)
                    for entry in entries
                    if entry.name.startswith("rollout-")
                    and entry.name.endswith(".jsonl")
                    and entry.path != path
                ]
        except OSError:
            continue
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


def _days(folder: str) -> list[str]:
    """The parent's folder, then, when it is a dated one, each later day's up to tomorrow (UTC,
    so that no time zone ends the list a day early)."""
    dated = _DAY.match(folder)
    if dated is None:
        return [folder]
    root, year, month, day = dated.groups()
    try:
        first = datetime.date(int(year), int(month), int(day))
    except ValueError:
        return [folder]
    last = min(
        first + datetime.timedelta(days=DAYS),
        datetime.datetime.fromtimestamp(time.time(), datetime.timezone.utc).date()
        + datetime.timedelta(days=1),
    )
    days = [folder]
    when = first + datetime.timedelta(days=1)
    while when <= last:
        days.append(f"{root}/{when.year:04d}/{when.month:02d}/{when.day:02d}")
        when += datetime.timedelta(days=1)
    return days


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
