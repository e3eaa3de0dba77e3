"""The Stop's steps that each answer one question in one call: a cap reached while the manager
answered (`caps.after_call`) and what the finding ledger says at a Stop (`convergence.at_stop`).
Pinned where the mutation audit found changes no test noticed."""

from __future__ import annotations

from pathlib import Path

from autopilot_codex.config import load_config
from autopilot_codex.guards import Step
from autopilot_codex.state import State
from autopilot_codex.styles.autopilot import caps
from autopilot_codex.styles.autopilot.convergence import at_stop
from autopilot_codex.styles.autopilot.findings import Ledger
from tests.unit.test_convergence_rules import fix, found, judged
from tests.unit.test_reducer import make_state


def _after_call(state: State) -> Step | None:
    """`caps.after_call` a second after the loop began: only its spend can have reached a cap."""
    return caps.after_call(state, state.started_epoch + 1.0)


def test_a_cap_reached_while_the_manager_answered_ends_a_running_loop() -> None:
    spent = make_state(budget_usd=1.0, budget_used_usd=1.5)
    step = _after_call(spent)
    assert step is not None
    state, decision = step
    assert state.status == "stopped_budget" and decision.event == "verdict.budget"
    assert "budget" in (state.stop_reason or "")


def test_a_loop_under_its_caps_goes_on_after_the_call() -> None:
    assert _after_call(make_state(budget_usd=1.0, budget_used_usd=0.5)) is None


def test_a_loop_no_longer_running_is_not_ended_again_by_the_call() -> None:
    """Paused or stopped while the call ran (a typed `stop`): its status stands."""
    for status in ("paused", "stopped"):
        assert _after_call(make_state(status=status, budget_usd=1.0, budget_used_usd=1.5)) is None


def test_a_stop_without_a_replay_asks_the_ledger_only_for_its_pause(tmp_path: Path) -> None:
    config = load_config(environ={}, home=tmp_path, warnings=[])
    paused, replay = at_stop(make_state(), Ledger(), config, None, "base")
    assert paused is None and replay is None


def test_a_replayed_review_that_blocks_is_counted_as_the_stop_s_turn(tmp_path: Path) -> None:
    config = load_config(environ={}, home=tmp_path, warnings=[])
    state, decision, ledger = judged(make_state(), fix(found("same")), Ledger())
    paused, replay = at_stop(state, ledger, config, (state, decision), "base")
    assert paused is None and replay is not None
    counted, again, after = replay
    assert again.blocks and counted.iteration == state.iteration + 1
    assert counted.idle_stop_blocks == state.idle_stop_blocks + 1
    # Delivered once more in the same words: the ledger counts it.
    assert after.entries[0].verbatim == ledger.entries[0].verbatim + 1
