"""A lanes run as the views show it: each lane (task, state, round, spend) and the merge queue,
read from the run's record (and a running lane's rollout for its round).

The record is read as a user may have left it: missing (no lanes run: nothing shown), corrupt
or hand-edited (one clear line saying so, never a traceback).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..errors import BridgeError
from ..gitrepo import toplevel
from ..rounds import rollout
from ..rounds.driver import custody_for
from .driver import home_of
from .history import events
from .record import LOG, LanesRun, TaskState, lane_folder, load, path

T = TypeVar("T")
# What a hand-edited record can make a reader of it raise (a string where a number was, a
# list where an object was); anything else is a bug and is left to show itself.
UNSOUND = (AttributeError, KeyError, TypeError, ValueError)


def use(root: Path, show: Callable[[LanesRun], T]) -> T | str | None:
    """`show` of the last lanes run at `root`; None when it never ran lanes, one line saying
    why when its record cannot be read."""
    where = path(home_of(root))
    if not where.exists():
        return None
    try:
        run = load(where.parent)
        if run is not None:
            return show(run)
    except UNSOUND:
        pass
    return f"The lanes record {where} cannot be read (corrupt or edited by hand)."


def here(cwd: str, show: Callable[[LanesRun], list[str]]) -> list[str]:
    """`show`'s lines for the repository holding `cwd`; nothing outside a repository."""
    try:
        found = use(toplevel(Path(cwd)), show)
    except BridgeError:
        return []
    return [found] if isinstance(found, str) else found or []


def lines(root: Path) -> list[str]:
    """The last lanes run of the repository at `root`; nothing when it never ran lanes."""
    found = use(root, table)
    return [found] if isinstance(found, str) else found or []


def table(run: LanesRun) -> list[str]:
    cap = run.budget.limit.usd
    spent = f"${run.budget.spent.usd:.2f}" + ("" if math.isinf(cap) else f" of ${cap:.2f}")
    out = [f"Lanes run {run.run}: {run.status}, {run.lanes} at most, spent {spent}"]
    out += [_lane(task) for task in run.tasks]
    out.append(f"  queue: {', '.join(run.queue) or 'empty'}")
    return out + ([f"  {run.why}"] if run.why else [])


def story(run: LanesRun) -> list[str]:
    """The run's events, one line each: its lanes' starts, landings, refusals, stops and
    follow-ups, and its end."""
    out = [f"Lanes run {run.run}: {run.goal}"]
    for event in events(run):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(event.at)) if event.at else "-"
        out.append(f"{when} {event.lane} {event.text}")
    return out


def lane_log(root: Path, run: LanesRun, task_id: str) -> Path:
    """Where a lane's progress lines go (the driver's folder for the lane)."""
    return lane_folder(home_of(root), run.run, task_id) / LOG


def _lane(task: TaskState) -> str:
    rounds = _round(task) if task.state == "running" else task.rounds
    return f"  {task.id:<10} {task.state:<8} round {rounds}  ${task.usd:.2f}  {task.title}"


def _round(task: TaskState) -> int:
    """A running lane's round: the rounds its own rollout has begun."""
    log = rollout.last_run(custody_for(Path(task.worktree)).path) if task.worktree else None
    return len(log.rounds) + 1 if log is not None else 1
