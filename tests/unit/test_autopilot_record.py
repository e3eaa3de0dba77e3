"""The autopilot style's own record beside the envelope: read through `of`, changed with the
envelope in one `evolve`, and the neutral questions the envelope's readers ask of any record."""

from __future__ import annotations

import json

import pytest

from autopilot_codex import typedjson
from autopilot_codex.state import planless
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.styles.autopilot.record import evolve, of, position_of, task_of
from autopilot_codex.styles.ralph.record import RalphRecord
from tests.unit.test_reducer import make_state


def test_one_evolve_changes_the_envelope_and_the_record() -> None:
    state = evolve(make_state(), iteration=4, current_task="T2", no_progress_streak=2)
    assert (state.iteration, of(state).current_task, of(state).no_progress_streak) == (4, "T2", 2)
    assert (task_of(state) or None, position_of(state)) == (state.plan.tasks[1], (2, 3))
    assert of(make_state()).model == "gpt-6.2-sol"


def test_a_loop_past_its_last_task_has_none_current() -> None:
    state = evolve(make_state(), current_task=None)
    assert (task_of(state), position_of(state), of(state).working_on()) == (None, (3, 3), "")


def test_the_envelope_s_readers_ask_the_record_not_the_style() -> None:
    own = of(evolve(make_state(), no_progress_streak=3))
    assert own.working_on() == "T1"
    assert own.resumed().no_progress_streak == 0
    ralph = RalphRecord(prompt="go")
    assert (ralph.working_on(), ralph.resumed()) == ("", ralph)


def test_a_loop_of_another_style_has_no_autopilot_record() -> None:
    state = planless(goal="g", worktree="/w", head="h", style="ralph", own=RalphRecord("go"))
    with pytest.raises(TypeError, match="a ralph loop has no autopilot record"):
        of(state)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("timeout_s", float("inf"), "timeout_s: not a finite number"),
        ("consultations", -1, "consultations: negative"),
    ],
)
def test_the_record_refuses_values_no_bridge_writes(field: str, value: float, said: str) -> None:
    data = json.loads(make_state().to_json())
    data["autopilot"][field] = value
    with pytest.raises(typedjson.Invalid, match=said):
        parse_state(data)
