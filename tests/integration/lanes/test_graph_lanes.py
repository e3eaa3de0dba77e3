"""The three parts together, as the driver uses them: ready tasks get lanes from the current
integration head, so a task starts on top of everything it depends on."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.lanes import graph, worktrees
from autopilot_codex.lanes.queue import Merged, land
from autopilot_codex.manager.schemas import Plan, Task
from tests.integration.lanes.helpers import RUN, begun, commit_in


def _task(task_id: str, *deps: str) -> Task:
    return Task(id=task_id, title=task_id, files=[], steps=[], acceptance=["done"], tests=[],
                depends_on=list(deps))  # fmt: skip


def test_a_dependent_task_starts_on_top_of_what_it_depends_on(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    plan = Plan(summary="s", tasks=[_task("T1"), _task("T2"), _task("T3", "T1", "T2")])
    assert graph.problems(plan) == []
    merged: list[str] = []
    started: list[str] = []
    while len(merged) < len(plan.tasks):
        wave = graph.ready(plan, merged, started)
        places = {t.id: worktrees.add(repo, RUN, t.id) for t in wave}
        started += places
        for task_id, place in places.items():
            seen = sorted(p.name for p in place.glob("*.txt"))
            if task_id == "T3":  # both dependencies were merged before it got a lane
                assert seen == ["T1.txt", "T2.txt", "a.txt"]
            commit_in(place, {f"{task_id}.txt": task_id})
        for task_id in places:
            assert isinstance(land(repo, RUN, task_id), Merged)
            assert worktrees.remove(repo, RUN, task_id)
            merged.append(task_id)
    assert merged == ["T1", "T2", "T3"] and worktrees.existing(repo, RUN) == {}
