"""A state.json whose numbers no bridge writes is refused on load (and so quarantined), not
trusted: each range the bridge relies on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from autopilot_codex import typedjson
from autopilot_codex.state import Inflight, SpendCursor
from autopilot_codex.state_ranges import parse_state
from tests.unit.test_reducer import make_state

CALL = Inflight(
    kind="review", token="t", pid=1, generation=1, started_at=0.0, deadline=1.0, reserved_usd=0.1
)


def written(**update: Any) -> dict[str, Any]:
    """The state as the bridge writes it, with `update` applied to the file's fields."""
    data: dict[str, Any] = json.loads(
        make_state(inflight=CALL, spend_cursors=[SpendCursor(path="/t.jsonl")]).to_json()
    )
    data.update(update)
    return data


def test_the_state_as_written_loads() -> None:
    assert parse_state(written()).inflight == CALL


@pytest.mark.parametrize(
    ("field", "update"),
    [
        ("inflight.reserved_usd", {"inflight": {**CALL.__dict__, "reserved_usd": -1.0}}),
        ("inflight.reserved_usd", {"inflight": {**CALL.__dict__, "reserved_usd": float("inf")}}),
        ("spend_cursors.offset", {"spend_cursors": [{"path": "/t.jsonl", "offset": -3}]}),
        ("budget_usd", {"budget_usd": 0}),
        ("max_iterations", {"max_iterations": -1}),
    ],
)
def test_a_number_no_bridge_writes_is_refused(field: str, update: dict[str, Any]) -> None:
    with pytest.raises(typedjson.Invalid, match=field.replace(".", r"\.")):
        parse_state(written(**update))
