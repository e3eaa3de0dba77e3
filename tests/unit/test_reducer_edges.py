"""The autopilot reducer and the manager's price records at their edges, pinned where the
mutation audit found changes that no test noticed."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.config import Config
from autopilot_codex.manager import Outcome
from autopilot_codex.manager.pricing import Price, Usage
from autopilot_codex.manager.schemas import Review
from autopilot_codex.styles.autopilot import reducer
from tests.unit.test_reducer import make_state


def _started(session_id: str | None) -> str | None:
    state = make_state()
    assert state.plan is not None
    started = reducer.start(
        goal="g",
        plan=state.plan,
        base_sha="b",
        worktree="/w",
        config=Config(),
        cost_usd=0.01,
        session_id=session_id,
        host="claude",
        generation=0,
    )
    return started.session_id


def test_a_loop_started_in_a_session_belongs_to_it_and_an_empty_id_to_nobody() -> None:
    assert _started("sess-1") == "sess-1"
    assert _started("") is None


def test_a_failed_background_review_says_why_or_that_nothing_came() -> None:
    failed: Outcome[Review] = Outcome(None, cost_usd=0.02, error="timeout after 60s")
    _, decision = reducer.apply_background_review(make_state(), failed, "h", now="t")
    assert decision.message == "timeout after 60s"
    silent: Outcome[Review] = Outcome(None, cost_usd=0.02)
    _, decision = reducer.apply_background_review(make_state(), silent, "h", now="t")
    assert decision.message == "no answer"


@pytest.mark.parametrize("record", [Price(1.0, 0.1, 2.0), Usage(1, 2, 3)])
def test_a_price_and_a_usage_are_values_not_records_to_edit(record: object) -> None:
    field = dataclasses.fields(record)[0].name  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, field, 0)
