"""The store's files at their edges, on a loop saved straight through `Store` (no hooks, no
manager): the lock, the witness writes it makes or spares, and files that are not what the
bridge wrote."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from autopilot_codex import fileio
from autopilot_codex.errors import LockTimeout
from autopilot_codex.state import Plan, State, Task
from autopilot_codex.store import Store


def _state(repo: Path, **changes: object) -> State:
    task = Task("T1", "one", ["a.txt"], ["write"], ["exists"], [])
    state = State(
        goal="g", plan=Plan("s", [task]), current_task="T1", base_sha="0" * 40,
        task_base_sha="0" * 40, worktree=str(repo), model="m", session_id="sess-1",
    )
    return state.evolve(**changes)


def _running(repo: Path) -> Store:
    store = Store(repo)
    with store.locked():
        store.save(_state(repo))
        store.append_event("plan", decision="running")
    return store


def test_a_lock_let_go_without_appending_writes_no_witness(repo: Path) -> None:
    """The witness moves past lines appended under the lock, once, as it is let go; a lock
    taken and let go with nothing appended under it costs no write (an fsync per hook)."""
    store = _running(repo)
    store.append_event("outside the lock")
    before = store.witness_path.read_bytes()
    with store.locked():
        pass
    assert store.witness_path.read_bytes() == before
    with store.locked():
        store.append_event("inside")
    assert store.witness_path.read_bytes() != before
    # The same for a Store that appends before it ever takes the lock.
    fresh = Store(repo)
    fresh.append_event("outside, first")
    before = store.witness_path.read_bytes()
    with fresh.locked():
        pass
    assert store.witness_path.read_bytes() == before


def test_a_held_lock_is_waited_for_ten_seconds_by_default(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `lock_timeout_s` default, for the commands that build a Store without the
    config's value. The clock is the test's: each wait moves it on."""
    store = _running(repo)
    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    monkeypatch.setattr(time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    held = os.open(store.lock_path, os.O_RDWR)
    try:
        assert fileio._try_lock(held)
        with pytest.raises(LockTimeout, match="over 10s"), Store(repo).locked():
            pass
    finally:
        fileio.release(held)
        os.close(held)


def test_a_save_over_a_state_that_is_not_json_writes_the_new_one(repo: Path) -> None:
    store = _running(repo)
    store.state_path.write_text("{ not json")
    with store.locked():
        store.save(_state(repo, status="paused"))
    assert json.loads(store.state_path.read_text())["status"] == "paused"
    assert store.moved == []  # no status before it to tell the user of


def test_each_status_change_a_save_makes_is_kept_for_the_caller_to_tell(repo: Path) -> None:
    store = _running(repo)
    assert store.moved == []  # the first save has no status before it
    with store.locked():
        store.save(_state(repo))  # running again: no change
        paused = store.save(_state(repo, status="paused"))
    assert store.moved == [("running", paused)]
