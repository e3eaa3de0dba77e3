"""One trial's record and the run's raw file of them (`trials.jsonl`, one JSON object a line,
appended as each trial ends, so a killed run keeps every trial it finished)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

TRIALS = "trials.jsonl"


@dataclass(frozen=True)
class Trial:
    """What one (task, arm, repetition) did. `said_done`: the arm ended claiming the goal met
    (the host's turn ended normally, the loop's status is done, the run is complete);
    `resolved`: the hidden tests passed. Dollars are the product's one meter: the host's own
    report of its spend plus the manager's priced calls."""

    task: str
    arm: str
    rep: int
    host: str
    model: str
    resolved: bool
    said_done: bool
    host_usd: float
    manager_usd: float
    tokens: int
    wall_s: float
    status: str  # the arm's own word for how it ended (done, complete, error, timeout, ...)
    started: str = ""
    error: str = ""  # the arm could not run (a setup command failed)
    timed_out: bool = False
    detail: str = ""  # how the arm ended, in its own words
    # Questions the implementer put to the user (bench/ab/user.py), those the task's answers
    # covered (the rest got "no preference"), and those the manager answered for the user.
    questions_asked: int = 0
    questions_answered: int = 0
    questions_by_manager: int = 0

    @property
    def usd(self) -> float:
        return self.host_usd + self.manager_usd

    @property
    def false_done(self) -> bool:
        return self.said_done and not self.resolved

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "usd": self.usd, "false_done": self.false_done}


_NAMES = {f.name for f in fields(Trial)}


def from_json(data: dict[str, Any]) -> Trial:
    """A record read back; derived fields (`usd`, `false_done`) are recomputed, never trusted."""
    return Trial(**{k: v for k, v in data.items() if k in _NAMES})


def append(run_dir: Path, trial: Trial) -> None:
    with (run_dir / TRIALS).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(trial.to_json(), sort_keys=True) + "\n")


def load(run_dir: Path) -> list[Trial]:
    path = run_dir / TRIALS
    if not path.is_file():
        return []
    return [from_json(json.loads(line)) for line in _lines(path.read_text(encoding="utf-8"))]


def _lines(text: str) -> Iterable[str]:
    return (line for line in text.splitlines() if line.strip())
