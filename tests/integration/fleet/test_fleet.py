"""`submit` and `worker` over a real shared database: runs taken from one queue by worker
processes with their own clones, lanes driven there, branches pushed to the remote."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, cli, git, make_repo, review_body, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.fleet.helpers import (
    DEADLINE_S,
    Workers,
    by_id,
    finished,
    remote,
    wait_until,
    workers,
)
from tests.postgres import Cluster

LANE_HOST = ROOT / "tests" / "fakes" / "lane_host.py"


@pytest.fixture
def url(postgres: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    made = postgres.new_database()
    monkeypatch.setenv("AUTOPILOT_CODEX_DATABASE_URL", made)
    return made


@pytest.fixture
def rig(tmp_path: Path, url: str) -> Iterator[Workers]:
    yield from workers(tmp_path, url)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(LANE_HOST))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", command)
    log = tmp_path / "lanes.log"
    monkeypatch.setenv("LANE_HOST_LOG", str(log))
    return log


def submit(capsys: pytest.CaptureFixture[str], bare: Path, goal: str, *args: str) -> str:
    code, text = cli(
        capsys, "submit", str(bare), goal, "--implementer", "claude", "--manager", "openai", *args
    )
    assert code == 0, text
    return text.split("Submitted fleet run ", 1)[1].split()[0]


def test_a_worker_takes_a_submitted_run_and_pushes_its_branches(
    tmp_path: Path,
    rig: Workers,
    url: str,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.fakes.openai_server import Reply

    bare = remote(tmp_path)
    # Both lanes run at once (each waits for the other), so both finish together and queue up.
    (tmp_path / "barrier").mkdir()
    monkeypatch.setenv("LANE_HOST_BARRIER", f"{tmp_path / 'barrier'}:2")
    manager.enqueue(
        {"summary": "s", "tasks": [task(1, depends_on=[]), task(2, depends_on=[])]}, schema="Plan"
    )
    manager.enqueue(
        *(Reply(body=review_body("approve"), delay=REVIEW_S) for _ in range(2)), schema="Review"
    )
    fleet_id = submit(capsys, bare, "write the task files")
    rig.start("a", "--lanes", "2")
    wait_until(lambda: finished(url, 1), rig, "the run ended")
    run = by_id(url)[fleet_id]
    assert (run.status, run.executor) == ("SUCCESS", "a"), run
    assert run.result["tasks"] == {"T1": "merged", "T2": "merged"}
    # Pushed while it drove, or at the end.
    assert run.result["pushed"][f"autopilot/{fleet_id}/integration"] in ("pushed", "up to date")
    log = git(bare, "log", "--format=%s", f"autopilot/{fleet_id}/integration").splitlines()
    assert sorted(s for s in log if s.startswith("add ")) == ["add T1", "add T2"]
    # The run's queue landed one lane at a time: the second review began after the first ended.
    first, second = reviews(manager, ("T1", "T2"))
    assert first[1] <= second[0], (first, second)
    # The remote's own branch is the user's: never pushed to.
    assert git(bare, "log", "--format=%s", "main").splitlines() == ["initial"]
    # Every view shows the fleet's runs from the database.
    repo = make_repo(tmp_path / "elsewhere")
    monkeypatch.chdir(repo)
    for view in (["status"], ["loops"], ["watch", "--once"], ["report"]):
        code, text = cli(capsys, *view)
        assert f"  {fleet_id} success on a: complete, 2/2 merged · {bare.as_uri()}" in text, (
            view,
            text,
        )


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def held_by(tmp_path: Path, held: Path) -> str:
    """The executor whose workspace the held lane's implementer works in."""
    pid = int(held.read_text())
    cwd = Path(f"/proc/{pid}/cwd").resolve()
    (executor,) = (e for e in ("a", "b") if cwd.is_relative_to(tmp_path / f"home-{e}-lanes"))
    return executor


def reviews(manager: FakeOpenAI, tasks: tuple[str, ...]) -> list[tuple[float, float]]:
    """Each landing's review of these tasks, as the manager saw it: from its arrival to its
    answer (each answer held REVIEW_S)."""
    found = []
    for request in manager.requests_for(schema="Review"):
        if any(f"+{t}\n" in request.prompt_text for t in tasks):
            found.append((request.received_at, request.received_at + REVIEW_S))
    return sorted(found)


REVIEW_S = 1.0


def test_two_workers_share_the_queue_and_a_killed_ones_run_completes_with_no_lost_commit(
    tmp_path: Path,
    rig: Workers,
    url: str,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two runs, two workers (own clones, own executor ids). The lane of T2 is held mid-round;
    its worker dies with SIGKILL (the worker and its driver: the machine going down) and is
    started again with the same id: DBOS recovers its run, which resumes the lanes and
    completes. Every task lands once, every commit reaches the remote, and no run's queue ever
    lands two lanes at once."""
    from tests.fakes.openai_server import Reply

    bare = remote(tmp_path)
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T2:{release}")
    for first, second in ((1, 2), (3, 4)):
        manager.enqueue(
            {"summary": "s", "tasks": [task(first, depends_on=[]), task(second, depends_on=[])]},
            schema="Plan",
        )
    manager.enqueue(
        *(Reply(body=review_body("approve"), delay=REVIEW_S) for _ in range(4)), schema="Review"
    )
    ids = [submit(capsys, bare, f"write the task files, part {n}") for n in (1, 2)]
    rig.start("a", "--lanes", "2")
    rig.start("b", "--lanes", "2")
    held = Path(f"{release}.held")
    try:
        wait_until(held.exists, rig, "T2's implementer was held")
        victim = held_by(tmp_path, held)
        # Both workers hold a run: one queue, shared.
        wait_until(
            lambda: sorted(r.executor for r in by_id(url).values()) == ["a", "b"], rig, "both taken"
        )
        rig.kill(victim)
        rig.start(victim, "--lanes", "2")
    finally:
        release.touch()
    wait_until(lambda: finished(url, 2), rig, "both runs ended")
    found = by_id(url)
    for fleet_id in ids:
        run = found[fleet_id]
        assert run.status == "SUCCESS", (run, rig.said("a").read_text(), rig.said("b").read_text())
        assert run.result["status"] == "complete", run.result
        landed = sorted(run.result["tasks"])
        log = git(bare, "log", "--format=%s", f"autopilot/{fleet_id}/integration").splitlines()
        commits = sorted(s for s in log if s.startswith("add "))
        # One plan per run, whichever run asked first: each task's one commit, landed once.
        assert commits == [f"add {t}" for t in landed] and len(landed) == 2, (log, run.result)
        intervals = reviews(manager, tuple(landed))
        assert len(intervals) == 2
        assert intervals[0][1] <= intervals[1][0], intervals
    # The killed worker's run was recovered on the same executor and resumed there.
    assert any(
        r.executor == victim and r.result.get("status") == "complete" for r in found.values()
    )


def test_a_stopped_worker_leaves_its_run_to_its_next_start(
    tmp_path: Path,
    rig: Workers,
    url: str,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGTERM to the worker alone (a service manager stopping it): it interrupts its run, which
    stays pending, not done; the same id started again finishes it."""
    import os
    import signal

    bare = remote(tmp_path)
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T1:{release}")
    manager.enqueue({"summary": "s", "tasks": [task(1, depends_on=[])]}, schema="Plan")
    manager.enqueue(review_body("approve"), schema="Review")
    fleet_id = submit(capsys, bare, "write the task file")
    worker = rig.start("a", "--lanes", "1")
    try:
        wait_until(Path(f"{release}.held").exists, rig, "T1's implementer was held")
        os.kill(worker.pid, signal.SIGTERM)
        assert worker.wait(timeout=DEADLINE_S) == 0
        rig.procs.pop("a")
        assert "stopped; 1 run(s) left for its next start" in rig.said("a").read_text()
        assert by_id(url)[fleet_id].status == "PENDING"
        rig.start("a", "--lanes", "1")
    finally:
        release.touch()
    wait_until(lambda: finished(url, 1), rig, "the run ended")
    run = by_id(url)[fleet_id]
    assert (run.status, run.result["status"], run.result["resumed"]) == (
        "SUCCESS",
        "complete",
        True,
    )
    log = git(bare, "log", "--format=%s", f"autopilot/{fleet_id}/integration").splitlines()
    assert [s for s in log if s.startswith("add ")] == ["add T1"]


def test_a_run_refused_on_the_worker_ends_in_error_saying_why(
    tmp_path: Path,
    rig: Workers,
    url: str,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The manager cannot work on this worker (no key, no login): the run is refused there
    before any plan, and the database says so."""
    monkeypatch.delenv("OPENAI_API_KEY")
    fleet_id = submit(capsys, remote(tmp_path), "write the task file")
    rig.start("a")
    wait_until(lambda: finished(url, 1), rig, "the run ended")
    assert by_id(url)[fleet_id].status == "ERROR"
    code, text = cli(capsys, "loops")
    assert f"  {fleet_id} error on a" in text, text
    from dbos import DBOSClient

    client = DBOSClient(system_database_url=url)
    try:
        (status,) = client.list_workflows(workflow_ids=[fleet_id])
    finally:
        client.destroy()
    assert (
        "the run ended (1) without its record: autopilot-codex run: OPENAI_API_KEY is not set"
        in str(status.error)
    )


def test_a_worker_takes_over_the_runs_of_a_machine_that_will_not_come_back(
    tmp_path: Path,
    rig: Workers,
    url: str,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Worker a merged and pushed T1; it dies with everything it ran (its lanes too, its disk
    with them). `worker --take-over a` on another machine puts the run back on the queue; that
    worker clones, starts from the integration branch a pushed, and lands the rest: T1's
    commit is kept, never made twice."""
    import os
    import signal

    bare = remote(tmp_path)
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T2:{release}")
    plans = ([task(1, depends_on=[]), task(2, depends_on=[])], [task(2, depends_on=[])])
    for tasks in plans:
        manager.enqueue({"summary": "s", "tasks": tasks}, schema="Plan")
    manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    fleet_id = submit(capsys, bare, "write the task files")
    rig.start("a", "--lanes", "2")
    held = Path(f"{release}.held")
    pushed = f"autopilot/{fleet_id}/integration"

    def t1_pushed() -> bool:
        return held.exists() and "add T1" in git(bare, "log", "--format=%s", "--all")

    try:
        wait_until(t1_pushed, rig, "T1 merged and pushed while T2 is held")
        wait_until(
            lambda: "add T1" in git(bare, "log", "--format=%s", pushed), rig, "integration pushed"
        )
        rig.kill("a")
        os.killpg(os.getpgid(int(held.read_text())), signal.SIGKILL)
    finally:
        release.touch()
    rig.start("b", "--take-over", "a")
    wait_until(lambda: finished(url, 1), rig, "the run ended")
    run = by_id(url)[fleet_id]
    assert (run.status, run.executor, run.result["status"]) == ("SUCCESS", "b", "complete")
    assert "took over 1 run(s) of a" in rig.said("b").read_text()
    log = git(bare, "log", "--format=%s", pushed).splitlines()
    assert sorted(s for s in log if s.startswith("add ")) == ["add T1", "add T2"], log
