"""Strict loading of persisted state: the checks pydantic would make, without its import cost."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from autopilot_codex import typedjson
from autopilot_codex.state import Plan, ReviewRecord, State, Task
from autopilot_codex.styles.autopilot.record import AutopilotRecord


def state_dict(**update: Any) -> dict[str, Any]:
    state = State(
        goal="g",
        plan=Plan(summary="s", tasks=[Task("T1", "t", [], [], [], [])]),
        base_sha="b",
        worktree="/w",
    )
    data: dict[str, Any] = typedjson.dump(state)
    data.update(update)
    return data


def test_round_trip() -> None:
    state = typedjson.load(State, state_dict())
    assert typedjson.load(State, typedjson.dump(state)) == state
    data = {"model": "m", "current_task": "T1", "task_base_sha": "b"}
    review = {"diff_hash": "h", "decision": "fix", "summary": "s"}
    record = typedjson.load(AutopilotRecord, {**data, "last_review": review})
    assert isinstance(record.last_review, ReviewRecord)
    assert typedjson.load(AutopilotRecord, typedjson.dump(record)) == record


def test_state_json_leaves_the_plan_to_plan_json() -> None:
    state = typedjson.load(State, state_dict())
    stored = json.loads(state.to_json())
    assert "plan" not in stored
    assert stored["goal"] == "g"


@pytest.mark.parametrize(
    ("update", "where"),
    [
        ({"iteration": "3"}, "iteration: expected an integer"),
        ({"iteration": True}, "iteration: expected an integer"),
        ({"budget_used_usd": "1"}, "budget_used_usd: expected a number"),
        ({"status": "finished"}, "status: expected one of"),
        ({"session_id": 5}, "session_id: expected a string"),
        ({"plan": {"summary": "s", "tasks": [{"id": "T1"}]}}, "plan.tasks[0].title: missing"),
        ({"extra": 1}, "extra: unknown field"),
        ({"implementer_unpriced": "m"}, "implementer_unpriced: expected a list"),
        ({"compaction_pending": 1}, "compaction_pending: expected true or false"),
    ],
)
def test_invalid_fields_are_named(update: dict[str, Any], where: str) -> None:
    with pytest.raises(typedjson.Invalid) as caught:
        typedjson.load(State, state_dict(**update))
    assert where in str(caught.value)


def test_missing_required_field() -> None:
    data = state_dict()
    del data["goal"]
    with pytest.raises(typedjson.Invalid, match="goal: missing"):
        typedjson.load(State, data)


def test_integers_are_accepted_for_floats() -> None:
    assert typedjson.load(State, state_dict(budget_usd=7)).budget_usd == 7.0


def test_not_an_object() -> None:
    with pytest.raises(typedjson.Invalid, match="top level: expected an object"):
        typedjson.load(State, [1])


def test_records_copy_from_manager_answers() -> None:
    from autopilot_codex.manager.schemas import Finding as WireFinding
    from autopilot_codex.state import Finding

    wire = WireFinding(
        severity="low", file=None, line_start=None, line_end=None, title="t", recommendation="r"
    )
    assert Finding.of(wire) == Finding("low", None, None, None, "t", "r")


def test_stored_records_mirror_the_manager_schemas() -> None:
    # The manager's pydantic models are the wire format; the state keeps stdlib copies so that
    # hooks never import pydantic. The two must not drift apart.
    import dataclasses

    from autopilot_codex.manager import schemas
    from autopilot_codex.state import Finding

    for wire, stored in ((schemas.Task, Task), (schemas.Plan, Plan), (schemas.Finding, Finding)):
        assert list(wire.model_fields) == [f.name for f in dataclasses.fields(stored)], wire


def _literal_values(annotation: object) -> tuple[object, ...] | None:
    """The values of a Literal, also inside `X | None`; None when there is no Literal."""
    import typing

    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    for arg in typing.get_args(annotation):
        found = _literal_values(arg)
        if found is not None:
            return found
    return None


def test_stored_records_accept_exactly_the_manager_literals() -> None:
    # Field by field, including the allowed values: a severity or decision the manager may send
    # must be one the stored record accepts, and no other.
    import dataclasses
    import typing

    from autopilot_codex.manager import schemas
    from autopilot_codex.state import Finding, ReviewRecord, VerdictRecord

    pairs = (
        (schemas.Finding, Finding),
        (schemas.Review, ReviewRecord),
        (schemas.Verdict, VerdictRecord),
        (schemas.Task, Task),
    )
    for wire, stored in pairs:
        hints = typing.get_type_hints(stored)
        for field in dataclasses.fields(stored):
            if field.name not in wire.model_fields:
                continue
            wire_values = _literal_values(wire.model_fields[field.name].annotation)
            assert _literal_values(hints[field.name]) == wire_values, (wire, field.name)


@dataclasses.dataclass(frozen=True)
class _Inner:
    n: int


@dataclasses.dataclass(frozen=True)
class _Outer:
    free: Any
    inner: _Inner | None = None


@dataclasses.dataclass(frozen=True)
class _Unsupported:
    table: dict[str, int]


def test_any_is_kept_as_is_and_a_nested_record_s_problem_keeps_its_place() -> None:
    assert typedjson.load(_Outer, {"free": [1, {"a": None}]}) == _Outer([1, {"a": None}])
    assert typedjson.load(_Outer, {"free": 0, "inner": {"n": 2}}).inner == _Inner(2)
    # Inside an optional record, the error names the field within it, not "a or None".
    with pytest.raises(typedjson.Invalid) as caught:
        typedjson.load(_Outer, {"free": 0, "inner": {"n": "two"}}, "state")
    assert caught.value.where == "state.inner.n" and caught.value.problem == "expected an integer"


def test_a_field_type_the_loader_does_not_know_is_a_programming_error() -> None:
    with pytest.raises(TypeError, match="unsupported field type"):
        typedjson.load(_Unsupported, {"table": {"a": 1}})
