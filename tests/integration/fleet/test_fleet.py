"""`submit` and `worker` over a real shared database: runs taken from one queue by worker
processes with their own clones, lanes driven there, branches pushed to the remote."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli, git, review_body, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.fleet.helpers import Workers, by_id, finished, remote, wait_until, workers
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
    capsys: pytest.CaptureFixture[str],
) -> None:
    bare = remote(tmp_path)
    manager.enqueue(
        {"summary": "s", "tasks": [task(1, depends_on=[]), task(2, depends_on=[])]}, schema="Plan"
    )
    manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
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
    # The remote's own branch is the user's: never pushed to.
    assert git(bare, "log", "--format=%s", "main").splitlines() == ["initial"]
