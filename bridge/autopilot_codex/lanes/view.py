"""A lanes run as `status` and `loops` show it: each lane (task, state, round, spend) and the
merge queue, read from the run's record (and a running lane's rollout for its round)."""

from __future__ import annotations

import math
from pathlib import Path

from ..rounds import rollout
from ..rounds.driver import custody_for
from .driver import home_of
from .record import TaskState, load


def lines(root: Path) -> list[str]:
    """The last lanes run of the repository at `root`; nothing when it never ran lanes."""
    run = load(home_of(root))
    if run is None:
        return []
    cap = run.budget.limit.usd
    spent = f"${run.budget.spent.usd:.2f}" + ("" if math.isinf(cap) else f" of ${cap:.2f}")
    out = [f"Lanes run {run.run}: {run.status}, {run.lanes} at most, spent {spent}"]
    out += [_lane(task) for task in run.tasks]
    out.append(f"  queue: {', '.join(run.queue) or 'empty'}")
    return out + ([f"  {run.why}"] if run.why else [])


def _lane(task: TaskState) -> str:
    rounds = _round(task) if task.state == "running" else task.rounds
    return f"  {task.id:<10} {task.state:<8} round {rounds}  ${task.usd:.2f}  {task.title}"


def _round(task: TaskState) -> int:
    """A running lane's round: the rounds its own rollout has begun."""
    log = rollout.last_run(custody_for(Path(task.worktree)).path) if task.worktree else None
    return len(log.rounds) + 1 if log is not None else 1
