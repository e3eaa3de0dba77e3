"""The manager's plan as a graph: each task names the tasks that must merge before it starts.

Pure: what is wrong with a plan (`problems`, which the manager's corrective retry reads), what
may start now (`ready`), and a task as a lane's goal (`contract`). It reads any plan whose
tasks have the manager schema's fields: the answer (`manager.schemas`) or the stored copy
(`state`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol, TypeVar

from ..contract import clip
from .names import fits

# A task id becomes a branch and a folder name (worktrees.py): longer ones are refused here,
# where the manager can still be asked again.
ID_CHARS_MAX = 64
# A lane's contract is one argument of its command line, which Linux caps at 128 KiB: 24,000
# characters fit in any encoding. Past it the lane could never start, and the driver with it.
CONTRACT_CHARS_MAX = 24_000
# What a follow-up's id adds to the id of the task it repairs (`-fix` and its number).
FOLLOW_UP_ROOM = 8


class TaskLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def files(self) -> list[str]: ...
    @property
    def steps(self) -> list[str]: ...
    @property
    def acceptance(self) -> list[str]: ...
    @property
    def tests(self) -> list[str]: ...
    @property
    def depends_on(self) -> list[str]: ...


T = TypeVar("T", bound=TaskLike)
T_co = TypeVar("T_co", bound=TaskLike, covariant=True)


class PlanLike(Protocol[T_co]):
    @property
    def tasks(self) -> Sequence[T_co]: ...


def problems(plan: PlanLike[T]) -> list[str]:
    """Everything that keeps `plan` from being run as a graph; empty when it can be.

    Ids are compared without surrounding spaces and ignoring case: two ids that differ only in
    case would be one branch on a file system that ignores case.
    """
    tasks = plan.tasks
    if not tasks:
        return ["the plan had no tasks"]
    found: list[str] = []
    first: dict[str, str] = {}
    for n, task in enumerate(tasks, 1):
        key = _key(task.id)
        if not key:
            found.append(f"task {n} has an empty id")
        elif key in first:
            same = first[key].strip()
            note = "" if same == task.id.strip() else " (ids differing only in case are one branch)"
            found.append(f"task {n} ({task.id!r}) repeats the id {same!r}{note}")
        else:
            first[key] = task.id
        if len(task.id) > ID_CHARS_MAX:
            found.append(f"task {n}'s id is longer than {ID_CHARS_MAX} characters")
        elif key and not fits(task.id.strip(), FOLLOW_UP_ROOM):
            # Refused at its lane's start instead, it would stop the driver there at every resume.
            found.append(f"task {n}'s id {task.id!r} is too long as a branch name: use letters")
    for n, task in enumerate(tasks, 1):
        for dep in task.depends_on:
            if _key(dep) == _key(task.id):
                found.append(f"task {n} ({task.id!r}) depends on itself")
            elif _key(dep) not in first:
                found.append(f"task {n} ({task.id!r}) depends on {dep!r}, which no task has as id")
    found += [f"the tasks depend on each other in a cycle: {' -> '.join(c)}" for c in cycles(plan)]
    return found


def cycles(plan: PlanLike[T]) -> list[list[str]]:
    """Each cycle of dependencies once, as ids from the first task met back to itself.
    Unknown ids and a task naming itself are left to `problems`."""
    ids = {_key(t.id): t.id for t in plan.tasks}
    edges = {
        _key(t.id): [_key(d) for d in t.depends_on if _key(d) in ids and _key(d) != _key(t.id)]
        for t in plan.tasks
    }
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done
    found: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt) == 1:
                loop = path[path.index(nxt) :]
                found.append([ids[k] for k in (*loop, nxt)])
            elif nxt not in state:
                walk(nxt, path)
        path.pop()
        state[node] = 2

    for key in edges:
        if key not in state:
            walk(key, [])
    return found


def ready(plan: PlanLike[T], merged: Collection[str], started: Collection[str]) -> list[T]:
    """Tasks not started (nor merged) whose every dependency has merged, in plan order."""
    done = {_key(m) for m in merged}
    begun = {_key(s) for s in started} | done
    return [
        t
        for t in plan.tasks
        if _key(t.id) not in begun and all(_key(d) in done for d in t.depends_on)
    ]


def contract(task: TaskLike) -> str:
    """The task as a lane's goal: what to do, where, and how it is judged done. The tests are
    the manager's advice; only the user's checks are run by the bridge."""
    lines = [f"Task {task.id}: {task.title}"]
    sections = (
        ("Steps", task.steps),
        ("Files likely involved", task.files),
        ("Done when", task.acceptance),
        ("Tests worth adding or running (advice)", task.tests),
    )
    for head, items in sections:
        if items:
            lines += ["", f"{head}:", *(f"- {item}" for item in items)]
    return clip("\n".join(lines), CONTRACT_CHARS_MAX)


def _key(task_id: str) -> str:
    return task_id.strip().casefold()
