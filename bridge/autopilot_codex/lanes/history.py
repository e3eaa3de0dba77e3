"""A lanes run's story, told from its record: each lane's start, landing, refusal, stop and
follow-up, and the run's end.

The driver keeps no ledger of its own; its record holds each task's times, state and the words
of its end (`why`), which is all a lane's events are. Every value is read as a hand-edited
record may hold it: a missing time sorts first, never raises.
"""

from __future__ import annotations

from dataclasses import dataclass

from .record import LanesRun, TaskState

ENDS = ("merged", "refused", "dropped")
MERGED_AS = "merged as "


@dataclass(frozen=True)
class Event:
    # Seconds since the epoch; 0.0 when the record holds no time for it.
    at: float
    lane: str
    kind: str
    text: str


def merged_commit(task: TaskState) -> str:
    """The commit a merged task landed as (the record keeps it in the landing's words)."""
    return task.why.removeprefix(MERGED_AS) if task.state == "merged" else ""


def events(run: LanesRun) -> list[Event]:
    found: list[Event] = []
    for task in run.tasks:
        if task.attempts or task.started:
            again = f" (attempt {task.attempts})" if task.attempts > 1 else ""
            found.append(Event(task.started, task.id, "started", f"started{again}: {task.title}"))
        if task.state in ENDS:
            found.append(Event(task.ended, task.id, task.state, said(task.state, task.why)))
        if task.follows:
            # Written when the task it repairs was refused: told at that refusal's time.
            ended = next((t.ended for t in run.tasks if t.id == task.follows), 0.0)
            text = f"follow-up {task.id}: {task.title}"
            found.append(Event(ended, task.follows, "follow-up", text))
    found.sort(key=lambda e: e.at)
    if run.status != "running":
        last = max((e.at for e in found), default=0.0)
        why = "; ".join(w for w in (run.why, run.finish) if w)
        found.append(Event(last, "run", run.status, said(run.status, why)))
    return found


def said(kind: str, why: str) -> str:
    """What happened, in the record's words, led by its kind once ("merged as …", "refused
    (conflict): …", "dropped: the lane ended …")."""
    if why.startswith(f"{kind} "):
        return why
    return f"{kind}: {why}" if why else kind
