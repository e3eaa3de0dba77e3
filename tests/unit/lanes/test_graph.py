"""The plan as a graph: what keeps it from running, what is ready, and the lane's goal text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autopilot_codex.lanes.graph import ID_CHARS_MAX, contract, cycles, problems, ready
from autopilot_codex.manager.answers import meaning
from autopilot_codex.manager.schemas import Plan, Task
from autopilot_codex.state import Plan as StoredPlan
from autopilot_codex.state import Task as StoredTask


def t(task_id: str, *deps: str, **extra: Any) -> Task:
    fields: dict[str, Any] = {
        "id": task_id,
        "title": f"do {task_id}",
        "files": [],
        "steps": [],
        "acceptance": ["it works"],
        "tests": [],
        "depends_on": list(deps),
    }
    return Task(**{**fields, **extra})


def plan(*tasks: Task) -> Plan:
    return Plan(summary="s", tasks=list(tasks))


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        ([], ["the plan had no tasks"]),
        ([t("A"), t("B", "A")], []),
        ([t("A"), t("A")], ["task 2 ('A') repeats the id 'A'"]),
        ([t("A"), t(" A ")], ["task 2 (' A ') repeats the id 'A'"]),
        (
            [t("T1"), t("t1")],
            ["task 2 ('t1') repeats the id 'T1' (ids differing only in case are one branch)"],
        ),
        ([t(" ")], ["task 1 has an empty id"]),
        ([t("")], ["task 1 has an empty id"]),
        ([t("x" * (ID_CHARS_MAX + 1))], [f"task 1's id is longer than {ID_CHARS_MAX} characters"]),
        ([t("A", "Z")], ["task 1 ('A') depends on 'Z', which no task has as id"]),
        ([t("A", "A")], ["task 1 ('A') depends on itself"]),
        ([t("A", "B"), t("B", "A")], ["the tasks depend on each other in a cycle: A -> B -> A"]),
        (
            [t("A", "C"), t("B", "A"), t("C", "B")],
            ["the tasks depend on each other in a cycle: A -> C -> B -> A"],
        ),
        # A dependency named in another case is the same task.
        ([t("A"), t("B", "a")], []),
    ],
)
def test_problems(tasks: list[Task], expected: list[str]) -> None:
    assert problems(plan(*tasks)) == expected


def test_every_problem_is_named_at_once() -> None:
    found = problems(plan(t("A", "A", "Q"), t("A"), t("B", "C"), t("C", "B")))
    assert found == [
        "task 2 ('A') repeats the id 'A'",
        "task 1 ('A') depends on itself",
        "task 1 ('A') depends on 'Q', which no task has as id",
        "the tasks depend on each other in a cycle: B -> C -> B",
    ]


def test_two_separate_cycles_are_each_named_once() -> None:
    found = cycles(plan(t("A", "B"), t("B", "A"), t("C", "D"), t("D", "C"), t("E", "A")))
    assert found == [["A", "B", "A"], ["C", "D", "C"]]


def test_a_plan_with_a_cycle_gets_the_managers_corrective_retry() -> None:
    _, problem = meaning(plan(t("A", "B"), t("B", "A")))
    assert problem is not None and "cycle: A -> B -> A" in problem
    _, fine = meaning(plan(t("A"), t("B", "A")))
    assert fine is None


def test_an_answer_without_depends_on_still_parses_and_is_stored_with_it() -> None:
    answer = Plan.model_validate(
        {"summary": "s", "tasks": [{"id": "T1", "title": "x", "files": [], "steps": [],
                                     "acceptance": ["a"], "tests": []}]}
    )  # fmt: skip
    assert answer.tasks[0].depends_on == []
    stored = StoredPlan.of(plan(t("A"), t("B", "A")))
    assert [task.depends_on for task in stored.tasks] == [[], ["A"]]
    assert StoredTask.of(answer.tasks[0]).depends_on == []


def test_the_strict_schema_requires_depends_on() -> None:
    from openai.lib._pydantic import to_strict_json_schema

    schema = to_strict_json_schema(Plan)
    node = schema["$defs"]["Task"]
    assert sorted(node["required"]) == sorted(node["properties"])
    assert node["properties"]["depends_on"] == {
        "items": {"type": "string"}, "title": "Depends On", "type": "array"
    }  # fmt: skip


def test_ready_is_in_plan_order_and_skips_started_and_merged() -> None:
    graph = plan(t("C"), t("A"), t("B", "A"), t("D", "A", "C"))
    assert [x.id for x in ready(graph, merged=(), started=())] == ["C", "A"]
    assert [x.id for x in ready(graph, merged=(), started=("C",))] == ["A"]
    assert [x.id for x in ready(graph, merged=("A",), started=("C",))] == ["B"]
    assert [x.id for x in ready(graph, merged=("A", "C"), started=("B",))] == ["D"]
    assert ready(graph, merged=("A", "B", "C", "D"), started=()) == []


def test_ready_reads_the_stored_plan_too() -> None:
    stored = StoredPlan.of(plan(t("A"), t("B", "A")))
    assert [x.id for x in ready(stored, merged=("A",), started=("A",))] == ["B"]


def test_the_contract_names_everything_and_keeps_tests_as_advice() -> None:
    text = contract(
        t("T2", "T1", steps=["edit a"], files=["a.py"], acceptance=["a works"], tests=["pytest"])
    )
    assert text == (
        "Task T2: do T2\n\nSteps:\n- edit a\n\nFiles likely involved:\n- a.py\n\n"
        "Done when:\n- a works\n\nTests worth adding or running (advice):\n- pytest"
    )
    assert contract(t("T1", acceptance=[])) == "Task T1: do T1"


@st.composite
def dags(draw: st.DrawFn) -> tuple[Plan, list[str]]:
    """A random acyclic plan in a shuffled plan order, and one topological order of it."""
    count = draw(st.integers(min_value=1, max_value=12))
    ids = [f"T{n}" for n in range(count)]
    tasks = []
    for n, task_id in enumerate(ids):
        deps = draw(st.lists(st.sampled_from(ids[:n]), unique=True)) if n else []
        tasks.append(t(task_id, *deps))
    shuffled = draw(st.permutations(tasks))
    return plan(*shuffled), ids


@settings(max_examples=200, deadline=None)
@given(dags(), st.randoms())
def test_every_task_becomes_ready_exactly_once_in_a_topological_merge(
    drawn: tuple[Plan, list[str]], rnd: Any
) -> None:
    graph, _ = drawn
    assert problems(graph) == []
    merged: list[str] = []
    started: list[str] = []
    seen: list[str] = []
    while len(merged) < len(graph.tasks):
        now = [x.id for x in ready(graph, merged, started)]
        # In plan order, none seen before, each with every dependency merged.
        order = [x.id for x in graph.tasks]
        assert now == sorted(now, key=order.index)
        assert not set(now) & set(seen)
        needs = {x.id: x.depends_on for x in graph.tasks}
        assert all(set(needs[i]) <= set(merged) for i in now)
        seen += now
        started += now
        running = [s for s in started if s not in merged]
        assert running, "nothing ready and nothing running: the plan would stall"
        merged.append(rnd.choice(running))
    assert sorted(seen) == sorted(x.id for x in graph.tasks)
