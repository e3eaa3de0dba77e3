"""The report's lanes section: the repository's last lanes run, each task (state, rounds,
spend, merged commit) and the merge queue's outcomes (each landing, refusal and follow-up).

Every value the run's record holds (a title, a refusal's reason) is untrusted text: it reaches
the page only through the template's autoescaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..lanes.history import events, merged_commit
from ..lanes.record import LanesRun
from ..lanes.view import use

# The queue's outcomes: what happened to a lane that finished and what the manager wrote then.
OUTCOMES = ("merged", "refused", "dropped", "follow-up")


@dataclass(frozen=True)
class Lane:
    id: str
    title: str
    state: str
    rounds: int
    usd: float
    commit: str
    follows: str
    why: str


@dataclass(frozen=True)
class Lanes:
    run: str
    goal: str
    status: str
    why: str
    lanes: int
    spent_usd: float
    tasks: list[Lane]
    queue: list[str]
    # (lane, what happened, in the record's words), in the order it happened.
    outcomes: list[tuple[str, str, str]]


def of_run(run: LanesRun) -> Lanes:
    tasks = [
        Lane(
            t.id, t.title, t.state, int(t.rounds), float(t.usd), merged_commit(t), t.follows, t.why
        )
        for t in run.tasks
    ]
    outcomes = [(e.lane, e.kind, e.text) for e in events(run) if e.kind in OUTCOMES]
    why = "; ".join(w for w in (run.why, run.finish) if w)
    return Lanes(
        run.run,
        run.goal,
        run.status,
        why,
        run.lanes,
        run.budget.spent.usd,
        tasks,
        run.queue,
        outcomes,
    )


def section(root: Path) -> Lanes | str | None:
    """The section's data; one line when the record cannot be read; None with no lanes run."""
    return use(root, of_run)
