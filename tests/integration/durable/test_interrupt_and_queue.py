"""A durable run's loop runs on DBOS's thread: a Ctrl-C (SIGINT to the driver) still stops its
lanes and ends the attempt `interrupted`, and `run --resume` goes on from the database. And the
queue lands one lane at a time, whichever thread or attempt lands it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.lanes import queue
from autopilot_codex.lanes.driver import home_of
from autopilot_codex.rounds.hold import alive
from tests.conftest import git, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_lanes import barrier, lanes, plan, states, wait_for
from tests.integration.test_lanes import host as host  # noqa: F401 - the lanes' fake host


def test_a_ctrl_c_stops_the_lanes_and_resume_goes_on(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    tmp_path: Path,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T1:{release}")
    plan(manager, task(1, depends_on=[]))
    argv = [sys.executable, "-m", "autopilot_codex", "run", "write the task files", "--json"]
    argv += ["--implementer", "claude", "--manager", "openai", "--lanes", "1"]
    said = tmp_path / "driver.err"
    with said.open("wb") as err:
        proc = subprocess.Popen([*argv, "--cwd", str(repo)], stdout=subprocess.PIPE, stderr=err)
    try:
        wait_for(Path(f"{release}.held").exists, proc, said)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=300)
    finally:
        release.touch()
    record = json.loads(out)
    assert (proc.returncode, record["status"]) == (130, "interrupted"), said.read_text()
    t1 = record["tasks"][0]
    assert t1["state"] == "running" and not alive(t1["pid"])
    # The next attempt starts from the record the database holds, and lands the lane.
    code, record = lanes(repo, "--resume")
    assert (code, states(record)) == (0, {"T1": "merged"}), record
    assert record["tasks"][0]["attempts"] == 2
    assert git(repo, "log", "--format=%s", "main").count("add T1") == 1
    assert json.loads((home_of(repo) / "lanes.json").read_text())["status"] == "complete"


def test_the_queue_lands_one_lane_at_a_time(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    tmp_path: Path,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three lanes that end together: their landings never overlap."""
    inside: list[int] = []
    most = [0]
    guard = threading.Lock()
    real = queue.land

    def counted(*args: Any, **kwargs: Any) -> Any:
        with guard:
            inside.append(1)
            most[0] = max(most[0], len(inside))
        try:
            time.sleep(0.05)  # room for another landing to come in, were it let
            return real(*args, **kwargs)
        finally:
            with guard:
                inside.pop()

    monkeypatch.setattr(queue, "land", counted)
    barrier(tmp_path, monkeypatch, 3)
    plan(manager, *(task(n, depends_on=[]) for n in (1, 2, 3)))
    code, record = lanes(repo, "--lanes", "3")
    assert (code, set(states(record).values())) == (0, {"merged"}), record
    assert most[0] == 1
    merges = git(repo, "log", "--format=%s", "main").splitlines()
    assert sum(s.startswith("Merge task") for s in merges) == 3
