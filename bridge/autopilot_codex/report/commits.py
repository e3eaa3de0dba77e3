"""The commits a loop made, each with its diff stat and the task or round it belongs to."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from ..errors import BridgeError
from ..gitrepo import EMPTY_TREE
from ..gitrepo.runner import run_git
from ..loopfiles import LoopFiles, items, number, text
from .timeline import Entry, accepted_tasks, iso

# A loop of a hundred commits is already more than a page can show usefully.
LIMIT = 200
SEP = "\x1e"
SHA = re.compile(r"[0-9a-f]{7,64}")


@dataclass(frozen=True)
class Commit:
    sha: str
    at: str
    subject: str
    files: int
    added: int
    removed: int
    # The task (autopilot), the round (rounds), or "" when the loop does not say.
    owner: str


@dataclass(frozen=True)
class Group:
    owner: str
    commits: list[Commit]

    @property
    def added(self) -> int:
        return sum(c.added for c in self.commits)

    @property
    def removed(self) -> int:
        return sum(c.removed for c in self.commits)


def commits(files: LoopFiles, entries: list[Entry], worktree: Path) -> list[Commit]:
    """The commits since the loop's base, oldest first; [] when git cannot say (a removed
    worktree, a rewritten history): the report is still worth having without them.

    The worktree is the one the user asked about, never the path in the state; the base must
    be a commit id: in an unguarded loop the implementer can write the state, and a base of
    `--output=FILE` would have git write that file."""
    # A rounds run's base is its header's: `run --resume` holds the loop again from HEAD, so
    # the state's base moves past the rounds before it.
    header = text(files.run_header(), "base_sha") if files.held_by_run else ""
    base = header or text(files.state, "base_sha") or text(files.run_header(), "base_sha")
    if not SHA.fullmatch(base):
        return []
    spec = "HEAD" if base == EMPTY_TREE else f"{base}..HEAD"
    try:
        out = run_git(
            worktree,
            "log",
            "--reverse",
            f"--max-count={LIMIT}",
            f"--format={SEP}%H%x00%ct%x00%s",
            "--numstat",
            "--end-of-options",
            spec,
            "--",
        )
    except (BridgeError, OSError):
        return []
    owners = _owners(files, entries)
    found = []
    for block in out.split(SEP)[1:]:
        head, _, stat = block.partition("\n")
        sha, _, rest = head.partition("\x00")
        stamp, _, subject = rest.partition("\x00")
        added = removed = count = 0
        for line in stat.splitlines():
            parts = line.split("\t")
            if len(parts) < 3:
                continue
            count += 1
            added += int(parts[0]) if parts[0].isdigit() else 0
            removed += int(parts[1]) if parts[1].isdigit() else 0
        at = iso(float(stamp)) if stamp.isdigit() else ""
        when = float(stamp) if stamp.isdigit() else 0.0
        found.append(Commit(sha, at, subject, count, added, removed, owners(sha, at, when)))
    return found


def grouped(found: list[Commit]) -> list[Group]:
    return [Group(owner, list(run)) for owner, run in groupby(found, key=lambda c: c.owner)]


def _owners(files: LoopFiles, entries: list[Entry]) -> Callable[[str, str, float], str]:
    rounds = {
        text(r, "commit"): f"round {int(number(r, 'round'))}"
        for r in files.rounds()
        if text(r, "commit")
    }
    tasks = [text(t, "id") for t in items(files.plan, "tasks") if text(t, "id")]
    accepted = accepted_tasks(entries)

    spans = [
        (number(r, "start") - 1, number(r, "end") + 1, f"round {int(number(r, 'round'))}")
        for r in files.rounds()
    ]

    def owner(sha: str, at: str, stamp: float) -> str:
        for commit, name in rounds.items():
            if sha.startswith(commit) or commit.startswith(sha):
                return name
        # A round may commit itself: then the driver has nothing to commit, and time says.
        for start, end, name in spans:
            if start <= stamp <= end:
                return name
        if not tasks:
            return ""
        done = {task for when, task in accepted if when < at}
        left = [t for t in tasks if t not in done]
        return f"task {left[0]}" if left else "wrap-up"

    return owner
