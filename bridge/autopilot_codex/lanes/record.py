"""A lanes run's own record: the plan, each task's state, its lane, the budget and the queue.

Kept in the repository's state home (beside the rounds' files, out of the implementer's reach),
rewritten whole and atomically after every change, so a driver killed at any moment leaves a
record `run --resume` can continue from: a merged task is never run again, and a lane whose
process is gone resumes in its own worktree.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import surrogates
from ..durable.steps import publish
from ..fileio import atomic_write
from .budget import Budget
from .names import component

State = Literal["pending", "running", "landing", "merged", "refused", "dropped"]
# The lanes' folder in a repository's state home, and the run's record in it.
FOLDER = "lanes"
NAME = "lanes.json"
# What each lane leaves in its own folder: the rounds run's final record and its log.
FINAL = "final.json"
LOG = "lane.log"
# The durable run's latest record, as an event of its workflow (`durable.steps.publish`).
RECORD_EVENT = "record"


@dataclass
class TaskState:
    id: str
    title: str
    depends_on: list[str]
    contract: str
    # The manager's task as it was planned (`manager.schemas.Task`), for the graph.
    spec: dict[str, Any] = field(default_factory=dict)
    state: State = "pending"
    branch: str = ""
    worktree: str = ""
    pid: int = 0
    # The lane process's start time (`lane.born`): a live pid is the lane's only when it matches.
    pid_start: int = 0
    started: float = 0.0
    ended: float = 0.0
    usd: float = 0.0
    tokens: int = 0
    rounds: int = 0
    # Why a lane ended as it did (its run's status, a refusal's reason, a timeout).
    why: str = ""
    # A follow-up task names the task whose refused landing it repairs.
    follows: str = ""
    # Times this task's lane was started (a resumed lane counts again).
    attempts: int = 0


@dataclass
class LanesRun:
    run: str
    goal: str
    implementer: str
    manager: str
    lanes: int
    user_branch: str
    user_sha: str
    budget: Budget
    tasks: list[TaskState] = field(default_factory=list)
    # The merge queue: task ids waiting to land, in the order their lanes ended.
    queue: list[str] = field(default_factory=list)
    status: str = "running"
    why: str = ""
    manager_calls: int = 0
    checks: list[str] = field(default_factory=list)
    checks_env: list[str] = field(default_factory=list)
    round_timeout_s: float = 3600.0
    silent_s: float = 3600.0
    lane_usd: float | None = None
    finish: str = ""
    # Why the run ended on its budget ("" while it did not): a ready task's reservation did
    # not fit while no lane ran, or the manager's next call did not fit.
    starved: str = ""
    # The worst case of one review or follow-up (`begin.worst_usd`), held before each is made.
    call_usd: float = 0.0
    # What each lane's rounds run is given besides its caps: `--rounds` (0: the rounds driver's
    # default), `--host-arg`s (the wall's flags are always added) and `--require-wall`.
    rounds: int = 0
    host_args: list[str] = field(default_factory=list)
    require_wall: bool = False
    # The integration head as the queue last left it (never read back from the refs, which a
    # lane's implementer may be able to write).
    integration: str = ""

    def task(self, task_id: str) -> TaskState:
        return next(t for t in self.tasks if t.id == task_id)

    def ids(self, *states: State) -> list[str]:
        return [t.id for t in self.tasks if t.state in states]

    def merged(self) -> set[str]:
        """The tasks merged, a task whose follow-up merged among them."""
        done = [t for t in self.tasks if t.state == "merged"]
        return {t.id for t in done} | {t.follows for t in done if t.follows}


def path(state_dir: Path) -> Path:
    return state_dir / NAME


def lane_folder(state_dir: Path, run: str, task_id: str) -> Path:
    """One lane's own folder: its pid, its final record and its log."""
    return state_dir / component(run) / component(task_id)


def raw_of(run: LanesRun) -> dict[str, Any]:
    raw = asdict(run)
    raw["budget"] = run.budget.record()
    return raw


def save(state_dir: Path, run: LanesRun) -> None:
    """The user's view of the run, and (in a durable run) its latest record in the database,
    which a later `run --resume` goes on from."""
    raw = raw_of(run)
    atomic_write(path(state_dir), json.dumps(raw, indent=1, sort_keys=True) + "\n")
    publish(RECORD_EVENT, raw)


def parse(raw: Any) -> LanesRun | None:
    """A record read back (from the file or the database), or None when it is no record."""
    try:
        raw = dict(raw)
        tasks = [TaskState(**t) for t in raw.pop("tasks")]
        budget = Budget.read(raw.pop("budget"))
        return LanesRun(budget=budget, tasks=tasks, **raw)
    except (ValueError, TypeError, KeyError, AttributeError):
        # A record edited into a JSON string or number has no fields to pop.
        return None


def load(state_dir: Path) -> LanesRun | None:
    """The last lanes run of this repository, or None when there is none (or it is unreadable)."""
    try:
        return parse(surrogates.loads(path(state_dir).read_text()))
    except (OSError, ValueError):
        return None
