"""The autopilot Stop's door is built as its first hold is taken (`Effects.opened`): a Stop
cut short after it still gives its slot back through that door, and a first hold cut short
writes nothing, so it keeps no slot."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import hosts, styles
from autopilot_codex.config import Config
from autopilot_codex.styles.autopilot import caps, stop
from autopilot_codex.styles.autopilot.record import evolve
from tests.conftest import git
from tests.unit.test_autopilot_stop import planted


def broken(model: str, config: Config) -> object:
    raise RuntimeError("the backend broke")


def test_a_stop_whose_call_breaks_gives_the_slot_back_through_the_door_its_hold_built(
    tmp_path: Path,
) -> None:
    context, store = planted(tmp_path, None)
    head = git(store.worktree, "rev-parse", "HEAD")
    with store.locked():
        state = store.load(with_plan=False)
        assert state is not None
        store.save(evolve(state, base_sha=head, task_base_sha=head))
    ctx = styles.HookContext(context.payload, store, Config(), hosts.get("claude"), broken)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="the backend broke"):
        stop.on_stop(ctx)
    state = store.load(with_plan=False)
    assert state is not None and state.inflight is None and state.stop_events == 1


def test_a_first_hold_cut_short_writes_nothing_and_keeps_no_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context, store = planted(tmp_path, None)
    before = store.state_path.read_text()

    def guard(*args: object, **kwargs: object) -> object:
        raise RuntimeError("the guard broke")

    monkeypatch.setattr(caps, "stop_guard", guard)
    with pytest.raises(RuntimeError, match="the guard broke"):
        stop.on_stop(context)
    assert store.state_path.read_text() == before
    state = store.load(with_plan=False)
    assert state is not None and state.inflight is None
