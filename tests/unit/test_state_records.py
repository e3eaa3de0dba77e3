"""The envelope and the style records it holds: each style's record type decodes its part of
state.json, and what does not fit is refused by name."""

from __future__ import annotations

import json
import types
from typing import cast

import pytest

from autopilot_codex import styles, typedjson
from autopilot_codex.state import parse_state, planless
from autopilot_codex.state_file import migrate
from autopilot_codex.styles.ralph.record import RalphRecord, of
from autopilot_codex.styles.rounds import RoundsRecord


def test_each_record_counts_the_iterations_ended_its_own_way() -> None:
    # A ralph loop counts the iteration now running; the others, the ones ended.
    assert (RalphRecord("p").ended(3), RoundsRecord().ended(3)) == (2, 3)


def test_a_loop_of_another_style_has_no_ralph_record() -> None:
    state = planless(goal="g", worktree="/w", head="h", style="rounds", own=RoundsRecord())
    with pytest.raises(TypeError, match="a rounds loop has no ralph record"):
        of(state)


def test_a_loop_of_an_unknown_style_is_refused_by_name() -> None:
    data = json.loads(planless(goal="g", worktree="/w", head="h", style="ralph").to_json())
    with pytest.raises(typedjson.Invalid, match="unknown loop style 'nosuch'"):
        parse_state({**data, "style": "nosuch"})


def test_a_record_for_a_style_that_keeps_none_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    bare = cast(styles.Style, types.SimpleNamespace(RECORD=None))
    monkeypatch.setattr(styles, "STYLES", styles.STYLES.with_member("bare", lambda: bare))
    data = json.loads(planless(goal="g", worktree="/w", head="h", style="bare").to_json())
    assert parse_state(data).own is None
    with pytest.raises(typedjson.Invalid, match="a bare loop keeps no record of its own"):
        parse_state({**data, "bare": {"x": 1}})


def test_a_v3_ralph_record_without_a_clock_or_budget_keeps_the_envelopes() -> None:
    data = migrate({"schema_version": 3, "style": "ralph", "started_epoch": 5.0, "ralph": {"prompt": "p"}})
    assert data == {
        "schema_version": 4,
        "style": "ralph",
        "started_epoch": 5.0,
        "budget_usd": 0.0,
        "max_seconds": 0.0,
        "ralph": {"prompt": "p"},
    }
