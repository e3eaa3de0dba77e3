"""The ralph and rounds styles' handlers, called directly with a store in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex import hosts, styles
from autopilot_codex.config import Config
from autopilot_codex.hookio import ALLOW, HookInput
from autopilot_codex.state import State
from autopilot_codex.state_ranges import parse_state
from autopilot_codex.store import Store
from autopilot_codex.styles import rounds
from autopilot_codex.styles.autopilot.record import AutopilotRecord
from autopilot_codex.styles.ralph import handlers, reducer
from autopilot_codex.styles.ralph.record import RalphRecord
from autopilot_codex.styles.ralph.reducer import of


def no_manager(model: str, config: Config) -> object:
    raise AssertionError("ralph never calls the manager")


def ctx(
    store: Store, event: str, session: str | None = "s1", **extra: object
) -> styles.HookContext:
    payload = HookInput(event=event, session_id=session, **extra)  # type: ignore[arg-type]
    return styles.HookContext(payload, store, Config(), hosts.get("claude"), no_manager)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "wt", home=tmp_path / "home")


def plant(store: Store, **ralph: object) -> State:
    # Owned by the session the hooks below speak for: no hook claims an unowned loop.
    ralph.setdefault("session_id", "s1")
    state = reducer.start(
        prompt="Fix it.", now=0.0, completion_promise="DONE", worktree=str(store.worktree), head="b"
    )
    mine = {k: ralph.pop(k) for k in list(ralph) if k in RalphRecord.__dataclass_fields__}
    return store.save(state.evolve(own=of(state).evolve(**mine), **ralph))


def loaded(store: Store) -> tuple[State, RalphRecord]:
    state = store.load(with_plan=False)
    assert state is not None
    return state, of(state)


def test_the_registry_knows_ralph_and_rounds() -> None:
    assert styles.get("ralph") is handlers.handle
    assert styles.get("rounds") is rounds.handle


def test_put_mirrors_session_iteration_and_cap(store: Store) -> None:
    state = plant(store, session_id="s9", iteration=4, max_iterations=7)
    assert (state.session_id, state.iteration, state.max_iterations) == ("s9", 4, 7)


def test_a_tool_run_is_counted_and_seen_by_the_next_stop(store: Store) -> None:
    plant(store, idle_stop_blocks=2, tools_at_block=0)
    handlers.handle(ctx(store, "PostToolUseFailure"))
    state, ralph = loaded(store)
    assert (state.tool_events, ralph.tools_at_block) == (1, 0)
    answer = handlers.handle(ctx(store, "Stop", stop_hook_active=True))
    assert answer.block
    state, ralph = loaded(store)
    # The tool run reset the chain: this block is the first of a new one.
    assert (ralph.tools_at_block, state.idle_stop_blocks) == (1, 1)


def test_without_a_tool_run_the_chain_grows(store: Store) -> None:
    plant(store, idle_stop_blocks=1, tools_at_block=0)
    handlers.handle(ctx(store, "Stop", stop_hook_active=True))
    assert loaded(store)[0].idle_stop_blocks == 2


@pytest.mark.parametrize(
    ("setup", "kind", "status"),
    [
        ({"iteration": 50}, "max_iterations", "stopped_iteration_limit"),
        ({"idle_stop_blocks": 3}, "stalled", "paused"),
        ({"max_seconds": 1.0}, "deadline", "stopped_duration"),
    ],
)
def test_each_ending_has_its_status_and_result(
    store: Store, setup: dict[str, object], kind: str, status: str
) -> None:
    plant(store, **setup)
    answer = handlers.handle(ctx(store, "Stop", stop_hook_active=True))
    assert not answer.block and answer.message
    state = store.load(with_plan=False)
    assert state is not None and state.status == status
    assert json.loads(store.result_path.read_text())["why"] == kind
    # Fail closed: an ending by a guard keeps the rails until the user's cancel or stop.
    assert store.marker.exists() and store.rails.exists()
    assert "rails stay on" in answer.message


def test_a_compaction_lets_the_next_stop_through_once(store: Store) -> None:
    plant(store)
    handlers.handle(ctx(store, "PreCompact", trigger="auto"))
    assert handlers.handle(ctx(store, "Stop")) == ALLOW
    state, _ = loaded(store)
    assert (state.compaction_pending, state.iteration, state.status) == (False, 1, "running")
    assert handlers.handle(ctx(store, "Stop")).block


@pytest.mark.parametrize("session", [None, "other"])
def test_a_hook_that_does_not_own_the_loop_changes_nothing(
    store: Store, session: str | None
) -> None:
    plant(store, session_id="s1")
    before = store.state_path.read_text()
    for event in ("Stop", "PostToolUse", "PreCompact", "SessionStart"):
        assert handlers.handle(ctx(store, event, session, source="compact")) == ALLOW
    assert store.state_path.read_text() == before


def test_a_state_of_another_style_is_not_ralphs(store: Store) -> None:
    state = plant(store)
    autopilot = AutopilotRecord(model="", current_task=None, task_base_sha="b")
    store.save(state.evolve(style="autopilot", own=autopilot, budget_usd=5.0))
    assert handlers.handle(ctx(store, "Stop")) == ALLOW


def test_the_rounds_style_never_blocks_a_stop(store: Store) -> None:
    plant(store)
    for event in ("Stop", "PostToolUse", "SessionStart", "PreCompact"):
        assert rounds.handle(ctx(store, event, stop_hook_active=True)) == ALLOW


def test_state_json_round_trips_with_and_without_a_ralph_record(store: Store) -> None:
    state = plant(store, iteration=3)
    data = json.loads(state.to_json())
    assert parse_state(data).own == state.own
    data.pop("ralph")
    assert parse_state(data).own is None


@pytest.mark.parametrize(
    "bad",
    [{"iteration": 0}, {"max_iterations": -1}, {"idle_stop_blocks": -2}, {"tools_at_block": -1}],
)
def test_hand_edited_ralph_counters_are_refused(store: Store, bad: dict[str, int]) -> None:
    from autopilot_codex import typedjson

    data = json.loads(plant(store).to_json())
    # The counters are the envelope's since schema 4, the block count the record's.
    (data["ralph"] if "tools_at_block" in bad else data).update(bad)
    with pytest.raises(typedjson.Invalid, match="ralph|iteration|idle_stop_blocks"):
        parse_state(data)
