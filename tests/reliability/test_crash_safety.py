"""SIGKILL during state writes: the state file is always a whole old or a whole new state.

A child process (forked, so it starts in microseconds) saves alternating states through
`Store.save` as fast as it can; the parent kills it at a random moment, checks the files on
disk, and goes again.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import active_dir
from autopilot_codex.state import State
from autopilot_codex.store import Store
from tests.conftest import payload, run_launcher
from tests.reliability.conftest import Hook, marker_of, parse_state, state_of, state_path

ROUNDS = 150

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "updated_at"}


def variant(store: Store, **changes: Any) -> State:
    """The current state with some fields changed, built the way the bridge reads a file."""
    data = json.loads(store.state_path.read_text(encoding="utf-8"))
    data.update(changes)
    state = parse_state(json.dumps(data))
    assert isinstance(state, State)
    return state


def writer(store: Store, states: list[State]) -> int:
    """Fork a child that saves the states in turn until it is killed; returned once the child
    runs, so the kill's random moment falls among its saves, not in whatever the fork itself
    costs (a big test process, a coverage tracer starting its own data file)."""
    ready, told = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            os.close(ready)
            os.write(told, b"r")
            os.close(told)
            while True:
                for state in states:
                    store.save(state)
        finally:
            os._exit(1)
    os.close(told)
    os.read(ready, 1)
    os.close(ready)
    return pid


def cycle_time(store: Store, states: list[State]) -> float:
    """How long one round of saves takes here and now, so the kills spread over it."""
    began = time.perf_counter()
    for state in states:
        store.save(state)
    return time.perf_counter() - began


def kill_at_random(pid: int, rng: random.Random, cycle: float) -> None:
    # Aim over the first two rounds of saves.
    time.sleep(rng.uniform(0, 2 * cycle + 0.002))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status), "the writer died on its own"


def leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


@pytest.mark.timeout(120)
def test_sigkill_during_saves_never_tears_the_state(planned: Path) -> None:
    store = Store(planned)
    original = comparable(json.loads(state_path(planned).read_text(encoding="utf-8")))
    small = variant(store, iteration=1, goal="small")
    # Large enough that a write takes several system calls: a torn file would show.
    large = variant(store, iteration=2, goal="large " + "g" * 100_000, tool_events=77)
    paused = variant(store, iteration=3, status="paused", stop_reason="paused by the test")
    expected = {
        0: original,  # a kill before the first save completed
        1: comparable(json.loads(small.to_json())),
        2: comparable(json.loads(large.to_json())),
        3: comparable(json.loads(paused.to_json())),
    }
    rng = random.Random(1234)
    seen: set[int] = set()
    states = [small, large, paused]
    cycle = cycle_time(store, states)
    for _ in range(ROUNDS):
        kill_at_random(writer(store, states), rng, cycle)

        text = state_path(planned).read_text(encoding="utf-8")
        data = json.loads(text)  # never torn: always one whole JSON document ...
        parse_state(text)  # ... that the bridge accepts ...
        assert comparable(data) == expected[data["iteration"]]  # ... and is exactly one state
        seen.add(data["iteration"])
        loaded = store.load()  # the bridge's own read: no quarantine, no error
        assert loaded is not None and loaded.iteration == data["iteration"]
        if data["status"] == "running":
            # A running loop the hooks cannot find is a silently dead loop.
            marker = json.loads(marker_of(planned).read_text(encoding="utf-8"))
            assert marker["session_id"] == data["session_id"]
    assert {1, 2, 3} <= seen, "the kills never landed between two different states"


@pytest.mark.timeout(120)
def test_leftovers_of_killed_writers_break_nothing_later(
    planned: Path, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    store = Store(planned)
    states = [variant(store, tool_events=n, goal="x" * 100_000 * n) for n in (1, 2)]
    rng = random.Random(99)
    cycle = cycle_time(store, states)
    for _ in range(60):
        kill_at_random(writer(store, states), rng, cycle)

    # Whatever temp files the kills left, the loop carries on: load, hook, save.
    assert store.load() is not None
    before = state_of(planned)["tool_events"]
    result = hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read"))
    assert (result.code, result.stdout) == (0, "")
    assert state_of(planned)["tool_events"] == before + 1
    # The shadow history's own files (shadow/) are the loop's too.
    shadow = {"shadow.git", "shadow.lock", "shadow-turn"}
    # And git's: the checked copy of the base's objects, the index of the bridge's own stat data.
    git = {"base-objects", "git-index"}
    project_files = leftovers(
        store.dir,
        {
            "state.json",
            "plan.json",
            "plan.json.bridge",
            "witness.json",
            "events.jsonl",
            "state.lock",
            "hostfiles.json",
            "nested.json",
            *shadow,
            *git,
        },
    )
    assert all(name.endswith(".tmp") for name in project_files), [
        n for n in project_files if not n.endswith(".tmp")
    ]

    # Once the loop is stopped, nothing may be left in the index of running loops: the
    # launcher answers every hook of every session without Python only when it is empty.
    from autopilot_codex.cli import main

    assert main(["-C", str(planned), "stop", "done testing"]) == 0
    capsys.readouterr()
    assert leftovers(active_dir(), set()) == []
    result = run_launcher(
        ["hook", "PostToolUse", "--host", "claude"],
        json.dumps(payload("PostToolUse", planned, tool_name="Read")).encode(),
        env={"AUTOPILOT_CODEX_PYTHON": str(Path(sys.prefix) / "no-such-python")},
    )
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


def appender(store: Store, state: State) -> int:
    """Fork a child that saves and appends events, under the lock and without it, until killed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            n = 0
            while True:
                n += 1
                with store.locked():
                    store.save(state.evolve(tool_events=n))
                    store.append_event("crash.test", n=n, reason="r" * (n % 3000))
                store.append_event("crash.unlocked", n=n)
        finally:
            os._exit(1)
    return pid


@pytest.mark.timeout(120)
def test_sigkill_during_sealed_appends_never_looks_like_tampering(planned: Path) -> None:
    """The ledger's seals and the witness's anchor survive a writer killed anywhere."""
    store = Store(planned)
    state = variant(store)
    rng = random.Random(4321)
    began = time.perf_counter()
    with store.locked():
        store.save(state)
        store.append_event("crash.test", n=0)
    cycle = time.perf_counter() - began
    for _ in range(60):
        kill_at_random(appender(store, state), rng, cycle)
        loaded = store.load()  # no StateCorrupt: nothing but the bridge wrote here
        assert loaded is not None and loaded.status == "running"
    events = [json.loads(line) for line in store.events_path.read_text().splitlines()]
    assert all("mac" in e for e in events)
