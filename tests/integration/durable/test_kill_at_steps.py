"""A durable lanes run killed (`kill -9`) at each boundary between its steps, then resumed.

Two independent tasks, two lanes: the driver runs in a process of its own with
`AUTOPILOT_CODEX_DIE_AFTER_STEP=N`, so it kills itself right after its Nth step was recorded
(no timing: the Nth boundary whatever the load). `run --resume` then recovers the workflow.
Whatever N: every task merged exactly once (one review each, one commit each on the user's
branch), no commit lost, and the ledger (the run's spend, each task's, the manager's calls)
equal to the same run not killed. Parametrized over `database_url` (SQLite here; the shared
database's tests run the same against Postgres).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.durable.steps import DIE_AFTER_ENV
from tests.conftest import git, make_repo, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_lanes import host as host  # noqa: F401 - the lanes' fake host
from tests.integration.test_lanes import lanes, plan, states

# The steps of this run not killed: begin, plan, integration, a first look, two starts, the
# waits, two landings each with its look for a landing cut short and its removal, the finish.
# The waits see the two lanes end together or apart, so the count is 14 or 15: each N up to
# the larger is a boundary of one run or the other (past the end, the run is not killed).
BOUNDARIES = 15
_reference: dict[str, Any] = {}


def ledger(record: dict[str, Any]) -> dict[str, Any]:
    """What was spent, seconds aside (the lanes' wall time differs from run to run)."""
    spent = {k: v for k, v in record["spent"].items() if k != "seconds"}
    tasks = {t["id"]: (t["usd"], t["tokens"], t["rounds"]) for t in record["tasks"]}
    return {"spent": spent, "tasks": tasks, "manager_calls": record["manager_calls"]}


def driver(repo: Path, die_after: int) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-m", "autopilot_codex", "run", "write the task files"]
    argv += ["--implementer", "claude", "--manager", "openai", "--lanes", "2", "--json"]
    env = {**os.environ, DIE_AFTER_ENV: str(die_after)}
    return subprocess.run(
        [*argv, "--cwd", str(repo)], env=env, capture_output=True, check=False, timeout=600
    )


def merged_once(repo: Path, manager: FakeOpenAI, asked: int, record: dict[str, Any]) -> None:
    """Both tasks merged, each once: one plan and one review each asked since `asked` requests,
    each task's one commit on the user's branch, nothing else lost."""
    assert (record["status"], states(record)) == ("complete", {"T1": "merged", "T2": "merged"})
    schemas = [r.schema_name for r in manager.requests[asked:]]
    assert (schemas.count("Plan"), schemas.count("Review")) == (1, 2), schemas
    log = git(repo, "log", "--format=%s", "main").splitlines()
    assert sorted(s for s in log if s.startswith("add ")) == ["add T1", "add T2"]
    assert sum(s.startswith("Merge task") for s in log) == 2
    assert sorted(git(repo, "ls-files").split()) == ["README.md", "T1.txt", "T2.txt"]


def reference(tmp_path: Path, manager: FakeOpenAI) -> dict[str, Any]:
    """The same run not killed (once per session: the fakes make it the same every time)."""
    if not _reference:
        repo = make_repo(tmp_path / "reference")
        asked = len(manager.requests)
        plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
        code, record = lanes(repo, "--lanes", "2")
        assert code == 0, record
        merged_once(repo, manager, asked, record)
        _reference.update(ledger(record))
    return _reference


@pytest.mark.parametrize("die_after", range(1, BOUNDARIES + 1))
def test_killed_at_a_step_boundary_and_resumed_nothing_redone_nothing_counted_twice(
    tmp_path: Path, manager: FakeOpenAI, host: Path, database_url: str, die_after: int
) -> None:
    expected = reference(tmp_path, manager)
    repo = make_repo(tmp_path / "repo")
    asked = len(manager.requests)
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
    done = driver(repo, die_after)
    if done.returncode == -signal.SIGKILL:
        code, record = lanes(repo, "--resume")
    else:  # past the run's last step: it ended on its own
        code, record = done.returncode, json.loads(done.stdout)
    assert code == 0, (record, done.stderr.decode())
    merged_once(repo, manager, asked, record)
    assert ledger(record) == expected


def test_a_manager_call_cut_short_by_the_kill_is_charged_its_worst_case(
    tmp_path: Path, manager: FakeOpenAI, host: Path, database_url: str
) -> None:
    """Killed while the manager answers the plan (the call paid, its step not recorded): the
    recovered run asks again, and counts the lost call at its worst case, as its hold was."""
    from autopilot_codex.config import load_config
    from autopilot_codex.lanes.begin import worst_usd
    from tests.fakes.openai_server import Reply

    expected = reference(tmp_path, manager)
    repo = make_repo(tmp_path / "repo")
    held = threading.Event()
    body = {"summary": "lanes", "tasks": [task(1, depends_on=[]), task(2, depends_on=[])]}
    manager.enqueue(Reply(body=body, hold=held), schema="Plan")
    asked = len(manager.requests)
    argv = [sys.executable, "-m", "autopilot_codex", "run", "write the task files", "--json"]
    argv += ["--implementer", "claude", "--manager", "openai", "--lanes", "2"]
    proc = subprocess.Popen([*argv, "--cwd", str(repo)], stdout=subprocess.DEVNULL)
    try:
        while not [r for r in manager.requests[asked:] if r.schema_name == "Plan"]:
            assert proc.poll() is None
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    finally:
        held.set()
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
    code, record = lanes(repo, "--resume")
    assert (code, states(record)) == (0, {"T1": "merged", "T2": "merged"}), record
    worst = worst_usd(load_config({"manager": "openai"}), load_config({}).plan_output_tokens)
    assert record["spent"]["usd"] == pytest.approx(expected["spent"]["usd"] + worst)
    assert record["manager_calls"] == expected["manager_calls"]
