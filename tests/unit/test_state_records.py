"""The envelope and the style records it holds: each style's record type decodes its part of
state.json, and what does not fit is refused by name."""

from __future__ import annotations

import json

import pytest

from autopilot_codex import typedjson
from autopilot_codex.state import planless
from autopilot_codex.state_file import migrate
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.styles.ralph.record import RalphRecord
from autopilot_codex.styles.ralph.reducer import of
from autopilot_codex.styles.rounds import RoundsRecord


def test_each_record_counts_the_iterations_ended_its_own_way() -> None:
    # A ralph loop counts the iteration now running; the others, the ones ended.
    assert (RalphRecord("p").ended(3), RoundsRecord().ended(3)) == (2, 3)


def test_a_loop_of_another_style_has_no_ralph_record() -> None:
    state = planless(goal="g", worktree="/w", head="h", style="rounds", own=RoundsRecord())
    with pytest.raises(TypeError, match="a rounds loop has no ralph record"):
        of(state)


def test_a_record_for_a_style_that_registered_none_is_refused() -> None:
    data = json.loads(planless(goal="g", worktree="/w", head="h", style="nosuch").to_json())
    assert parse_state(data).own is None  # a style without a record of its own loads
    with pytest.raises(typedjson.Invalid, match="a nosuch loop keeps no record of its own"):
        parse_state({**data, "nosuch": {"x": 1}})


def test_a_v3_ralph_record_without_a_clock_or_budget_keeps_the_envelopes() -> None:
    data = migrate(
        {"schema_version": 3, "style": "ralph", "started_epoch": 5.0, "ralph": {"prompt": "p"}}
    )
    assert data == {
        "schema_version": 4,
        "style": "ralph",
        "started_epoch": 5.0,
        "budget_usd": 0.0,
        "max_seconds": 0.0,
        "ralph": {"prompt": "p"},
    }


def test_the_registry_hands_out_the_hook_context_when_asked_and_nothing_else() -> None:
    from autopilot_codex import styles
    from autopilot_codex.styles import context

    assert (styles.HookContext, styles.selected_manager) == (
        context.HookContext,
        context.selected_manager,
    )
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        _ = styles.nosuch


@pytest.mark.parametrize("style", [5, ["ralph"], None])
def test_a_style_that_is_not_a_name_is_refused(style: object) -> None:
    data = json.loads(planless(goal="g", worktree="/w", head="h", style="ralph").to_json())
    with pytest.raises(typedjson.Invalid, match="style: expected a string"):
        parse_state({**data, "style": style})
