"""The autopilot Stop's effects come in one value: a test hands it a fake clock and sleep, and
the Stop's waiting is judged by that clock alone (no wall-clock margin, no real sleep)."""

from __future__ import annotations

import os
from pathlib import Path

from autopilot_codex import hosts, styles
from autopilot_codex.config import Config
from autopilot_codex.hookio import HookInput
from autopilot_codex.state import Inflight, Plan, State, Task
from autopilot_codex.store import Store
from autopilot_codex.styles.autopilot import stop
from autopilot_codex.styles.autopilot.effects import Effects
from autopilot_codex.styles.autopilot.record import AutopilotRecord, evolve
from tests.conftest import git, make_repo


def no_manager(model: str, config: Config) -> object:
    raise AssertionError("a Stop that finds the slot held makes no call")


def planted(tmp_path: Path, slot: Inflight | None) -> tuple[styles.HookContext, Store]:
    repo = make_repo(tmp_path / "repo")
    store = Store(repo)
    task = Task("T1", "one", [], [], [], [])
    state = State(
        goal="g",
        plan=Plan("p", [task]),
        base_sha="b",
        worktree=str(repo),
        session_id="s1",
        own=AutopilotRecord(model="m", current_task="T1", task_base_sha="b", review_mode="commit"),
        inflight=slot,
    )
    with store.locked():
        store.save_plan(state.plan)
        store.save(state)
    payload = HookInput(event="Stop", session_id="s1")
    context = styles.HookContext(payload, store, Config(), hosts.get("claude"), no_manager)  # type: ignore[arg-type]
    return context, store


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        # Each poll moves the fake clock a long way: the Stop gives up on its own clock.
        self.slept.append(seconds)
        self.now += 10_000.0


def test_a_stop_waits_for_a_live_review_by_its_own_clock_then_answers_busy(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    # A live review (this process, far from its deadline by the real clock) holds the slot.
    slot = Inflight("review", "tok", os.getpid(), 1, started_at=1000.0, deadline=1e12)
    context, store = planted(tmp_path, slot)
    effects = Effects.of(context)
    effects = Effects(**{**vars(effects), "clock": clock, "sleep": clock.sleep})
    decision = stop.on_stop(context, effects)
    assert decision.event == "stop.busy" and not decision.blocks
    assert clock.slept == [stop.STOP_POLL_S]
    state = store.load(with_plan=False)
    assert state is not None and state.inflight == slot and state.stop_events == 1


def test_a_stop_whose_manager_call_breaks_leaves_the_slot_free(tmp_path: Path) -> None:
    context, store = planted(tmp_path, None)
    head = git(store.worktree, "rev-parse", "HEAD")
    with store.locked():
        state = store.load(with_plan=False)
        assert state is not None
        store.save(evolve(state, base_sha=head, task_base_sha=head))

    def broken(model: str, config: Config) -> object:
        raise RuntimeError("the backend broke")

    effects = Effects.of(context)
    effects = Effects(**{**vars(effects), "manager": broken})
    try:
        stop.on_stop(context, effects)
    except RuntimeError as exc:
        assert "the backend broke" in str(exc)
    else:
        raise AssertionError("the failure reaches the hook's own handler")
    state = store.load(with_plan=False)
    # The slot this Stop took (and the call's reservation) is given back in one more hold.
    assert state is not None and state.inflight is None and state.stop_events == 1


def test_a_hold_writes_its_lines_then_its_save_and_nothing_when_its_body_raises(
    tmp_path: Path,
) -> None:
    """`Effects.hold`: the loop loaded once as the lock is taken; what the body leaves is
    written as it is let go (the lines, then the decision's, then the save); a body cut short
    writes none of it, so no line names a state that was never saved."""
    from autopilot_codex.guards import allow

    context, store = planted(tmp_path, None)
    effects = Effects.of(context)
    before = store.load(with_plan=False)
    assert before is not None
    try:
        with effects.hold(context) as held:
            assert held.state is not None and held.state.goal == "g"
            held.lines.append(("review.superseded", {"pid": 1}))
            held.save = held.state.evolve(stop_events=7)
            raise RuntimeError("cut short")
    except RuntimeError:
        pass
    assert [e["event"] for e in store.tail_events()] == []
    after = store.load(with_plan=False)
    assert after is not None and after.stop_events == before.stop_events
    with effects.hold(context) as held:
        assert held.state is not None
        held.lines.append(("review.superseded", {"pid": 1}))
        held.decided.append((held.state, allow("stop.busy"), None))
        held.save = held.state.evolve(stop_events=7)
    assert [e["event"] for e in store.tail_events()] == ["review.superseded", "stop.busy"]
    after = store.load(with_plan=False)
    assert after is not None and after.stop_events == 7


def test_a_hold_of_the_owner_loads_nothing_for_another_session(tmp_path: Path) -> None:
    context, store = planted(tmp_path, None)
    other = styles.HookContext(
        HookInput(event="Stop", session_id="s2"),
        store,
        Config(),
        hosts.get("claude"),
        no_manager,  # type: ignore[arg-type]
    )
    effects = Effects.of(other)
    with effects.hold(other, claim=True) as held:
        assert held.state is None
    with effects.hold(other, owner=False) as held:
        assert held.state is not None and held.state.session_id == "s1"
