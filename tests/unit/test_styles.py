"""The styles registry and the owner policies every style shares."""

from __future__ import annotations

import pytest

from autopilot_codex import guards, styles
from autopilot_codex.errors import BridgeError
from autopilot_codex.state import Plan, State
from autopilot_codex.styles.autopilot import handlers
from autopilot_codex.styles.autopilot.record import AutopilotRecord


def make_state(**update: object) -> State:
    base = State(
        goal="g",
        plan=Plan("", []),
        base_sha="b",
        worktree="/w",
        own=AutopilotRecord(model="m", current_task=None, task_base_sha="b"),
    )
    return base.evolve(**update)


def test_the_registry_finds_autopilot_and_refuses_unknown_styles() -> None:
    assert styles.get("autopilot") is handlers.handle
    with pytest.raises(BridgeError, match="unknown loop style 'nope'"):
        styles.get("nope")


@pytest.mark.parametrize(
    ("owner", "claimed", "session", "expected"),
    [
        ("session", "s1", "s1", True),
        ("session", "s1", "s2", False),
        # Unowned: nobody's until a typed prompt claims it (guards.claim, typed).
        ("session", None, "s2", False),
        ("session", None, None, False),
        # An outside driver owns the loop: every session of the worktree is one of its rounds.
        ("driver", None, "round-1", True),
        ("driver", None, None, True),
        ("driver", "s1", "s2", True),
    ],
)
def test_owner_policies(
    owner: str, claimed: str | None, session: str | None, expected: bool
) -> None:
    assert guards.owns(make_state(owner=owner, session_id=claimed), session) is expected


def test_a_driver_loop_is_never_claimed_by_a_round() -> None:
    state = make_state(owner="driver", session_id=None)
    assert guards.claim(state, "round-1").session_id is None
    assert guards.claim(state, "round-1", typed=True) is state


def test_only_a_typed_prompt_claims_and_only_an_unowned_running_loop() -> None:
    assert guards.claim(make_state(session_id=None), "s1").session_id is None
    claimed = guards.claim(make_state(session_id=None), "s1", typed=True)
    assert claimed.session_id == "s1"
    # `state` itself: nothing changes, nothing is saved.
    owned = make_state(session_id="s1")
    assert guards.claim(owned, "s2", typed=True) is owned
    assert guards.claim(owned, "s1", "codex", typed=True) is owned
    paused = make_state(session_id=None, status="paused")
    assert guards.claim(paused, "s1", typed=True) is paused
    for nobody in (None, "", "null"):
        unowned = make_state(session_id=None)
        assert guards.claim(unowned, nobody, typed=True) is unowned


def test_stop_is_a_transition_of_the_guards() -> None:
    stopped = guards.stop(make_state(), "  ")
    assert (stopped.status, stopped.stop_reason) == ("stopped", "stopped by the user")
    assert guards.stop(make_state(), "lunch").stop_reason == "lunch"
