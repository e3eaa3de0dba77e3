"""Parallel hooks: Claude Code runs them at once, so the loop's state must survive a crowd.

Every hook here is a real process started through the launcher, as the host starts it.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.manager.pricing import Usage, cost_usd, price_for
from autopilot_codex.store import Store
from tests.conftest import LAUNCHER, payload, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reliability.conftest import (
    SESSION,
    events_of,
    parse_state,
    start_loop,
    state_of,
    state_path,
)

TOOL_HOOKS = 44
STOP_HOOKS = 6


@dataclass
class Finished:
    event: str
    code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def answer(self) -> dict[str, Any]:
        text = self.stdout.strip()
        return json.loads(text) if text else {}


def launcher_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, **extra}


def fire(jobs: list[tuple[str, dict[str, Any]]], env: dict[str, str]) -> list[Finished]:
    """Start every hook process first, then feed them all at once and collect the answers."""
    procs = [
        (
            event,
            subprocess.Popen(
                [str(LAUNCHER), "hook", event, "--host", "claude"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            ),
        )
        for event, _ in jobs
    ]
    start = threading.Barrier(len(procs))

    def finish(index: int) -> Finished:
        event, proc = procs[index]
        data = json.dumps(jobs[index][1]).encode()
        # Bounded: a crowd that never gathers fails the test instead of holding the suite.
        start.wait(timeout=120)
        began = time.monotonic()
        try:
            out, err = proc.communicate(data, timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Finished(event, -999, out.decode(), "deadlock? " + err.decode(), 90.0)
        return Finished(
            event, proc.returncode, out.decode(), err.decode(), time.monotonic() - began
        )

    with ThreadPoolExecutor(max_workers=len(procs)) as pool:
        return list(pool.map(finish, range(len(procs))))


class StateWatcher:
    """Reads state.json continuously, outside any lock, and keeps every unreadable moment."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                parse_state(self.path.read_text(encoding="utf-8"))
                self.reads += 1
            except Exception as exc:  # noqa: BLE001 - any failure to read is the finding
                self.problems.append(f"{type(exc).__name__}: {exc}")
            time.sleep(0.005)

    def __enter__(self) -> StateWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def test_fifty_parallel_hooks_lose_no_update(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Keep the loop running for the whole crowd: no iteration, no-progress or stall exit.
    monkeypatch.setenv("AUTOPILOT_CODEX_NO_PROGRESS_LIMIT", "1000")
    start_loop(repo, manager, capsys, "--max-iterations", "500")
    manager.default = Reply(body=verdict_body("continue"))
    planned_cost = state_of(repo)["budget_used_usd"]

    jobs: list[tuple[str, dict[str, Any]]] = [
        (
            "PostToolUse",
            payload("PostToolUse", repo, tool_name="Read", tool_input={"file_path": f"f{i}"}),
        )
        for i in range(TOOL_HOOKS)
    ] + [("Stop", payload("Stop", repo)) for _ in range(STOP_HOOKS)]
    random.Random(7).shuffle(jobs)
    with StateWatcher(state_path(repo)) as watcher:
        results = fire(jobs, launcher_env(AUTOPILOT_CODEX_LOCK_TIMEOUT_S="60"))

    for r in results:
        assert r.code == 0, (r.event, r.code, r.stderr)
        assert "Traceback" not in r.stderr, r.stderr
        assert isinstance(r.answer, dict)  # empty or one JSON object, nothing else
        assert "lock" not in r.answer.get("systemMessage", ""), r.answer
        if r.event == "PostToolUse":
            assert r.answer == {}
    # A Stop either got its manager verdict or, while another Stop held the loop's one call
    # in flight, answered at once without a call.
    judged = [r for r in results if r.event == "Stop" and r.answer.get("decision") == "block"]
    busy = [r for r in results if r.event == "Stop" and r.answer == {}]
    assert len(judged) + len(busy) == STOP_HOOKS
    assert judged

    state = state_of(repo)
    assert state["status"] == "running"
    assert state["tool_events"] == TOOL_HOOKS
    assert state["stop_events"] == STOP_HOOKS
    assert state["iteration"] == len(judged)
    assert len(manager.requests_for(schema="Verdict")) == len(judged)
    assert state["inflight"] is None
    attempt = cost_usd(Usage(1000, 0, 200), price_for(state["autopilot"]["model"]))
    assert state["budget_used_usd"] == pytest.approx(planned_cost + len(judged) * attempt)

    raw_lines = (state_path(repo).parent / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(isinstance(json.loads(line), dict) for line in raw_lines)
    verdicts = [e for e in events_of(repo) if e["event"] == "verdict.continue"]
    assert len(verdicts) == len(judged)
    assert len([e for e in events_of(repo) if e["event"] == "stop.busy"]) == len(busy)

    assert watcher.problems == [], watcher.problems[:5]
    assert watcher.reads > 0
    # Fifty processes appended to one sealed ledger: every line chains to the one before,
    # and the witness's anchor is on that chain.
    store = Store(repo)
    assert store.load() is not None
    store.audit()
    assert all("mac" in json.loads(line) for line in raw_lines)


def test_a_held_lock_gets_a_bounded_wait_and_a_non_blocking_answer(
    planned: Path, manager: FakeOpenAI
) -> None:
    jobs: list[tuple[str, dict[str, Any]]] = [
        ("Stop", payload("Stop", planned)),
        ("Stop", payload("Stop", planned, stop_hook_active=True)),
        ("PostToolUse", payload("PostToolUse", planned, tool_name="Read")),
        ("PreCompact", payload("PreCompact", planned, trigger="auto")),
        ("SessionStart", payload("SessionStart", planned, source="compact")),
        ("PostToolUse", payload("PostToolUse", planned, tool_name="Bash")),
    ]
    before = state_path(planned).read_bytes()
    # Another hook (this test) holds the loop's lock for the whole run: every hook that answers
    # at all gave up waiting for it (`fire` reports one that never answers as a deadlock).
    with Store(planned).locked():
        results = fire(jobs, launcher_env(AUTOPILOT_CODEX_LOCK_TIMEOUT_S="0.5"))

    for r in results:
        assert r.code == 0, r.stderr
        assert "decision" not in r.answer
        assert "lock" in r.answer["systemMessage"], r.answer
    # Nobody got in, nobody spent, nothing was half-written.
    assert state_path(planned).read_bytes() == before
    assert len(manager.requests) == 1
    assert state_of(planned)["session_id"] == SESSION
