"""The report's lanes section: the repository's last lanes run, each task (state, rounds,
spend, merged commit) and the merge queue's outcomes (each landing, refusal and follow-up).

Every value the run's record holds (a title, a refusal's reason) is untrusted text: it reaches
the page only through the template's autoescaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..lanes.history import events, merged_commit
from ..lanes.record import LanesRun, TaskState
from ..lanes.view import use

# The queue's outcomes: what happened to a lane that finished and what the manager wrote then.
OUTCOMES = ("merged", "refused", "dropped", "follow-up")


@dataclass(frozen=True)
class Lanes:
    run: LanesRun
    spent_usd: float
    # The run's own words on its end and on the user's branch.
    why: str
    # Each task with its spend, rounds and merged commit, the record's numbers checked as
    # numbers (a hand-edited one fails here, not in the page).
    tasks: list[tuple[TaskState, float, int, str]]
    # (lane, what happened, in the record's words), in the order it happened.
    outcomes: list[tuple[str, str, str]]


def of_run(run: LanesRun) -> Lanes:
    tasks = [(t, float(t.usd), int(t.rounds), merged_commit(t)) for t in run.tasks]
    outcomes = [(e.lane, e.kind, e.text) for e in events(run) if e.kind in OUTCOMES]
    why = "; ".join(w for w in (run.why, run.finish) if w)
    return Lanes(run, float(run.budget.spent.usd), why, tasks, outcomes)


def section(root: Path) -> Lanes | str | None:
    """The section's data; one line when the record cannot be read; None with no lanes run."""
    return use(root, of_run)
