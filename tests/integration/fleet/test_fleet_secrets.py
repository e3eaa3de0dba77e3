"""Attack: a worker's implementer looks for the fleet's secrets. It prints its environment and
reads every file it can reach beside its work (its worktree, the clone's git directory, the
folders beside the state home where the clones and the lanes live); neither the manager's key
nor the shared database's URL (its password inside) is there.

Without the wall (this fake host has none), the same user could also read other processes'
`/proc/<pid>/environ`; the hosts' sandboxes give the implementer its own PID namespace, so
that route is the wall's (docs/hosts-sandbox.md), as for a local run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PLANTED_KEY, review_body, task
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.fleet.helpers import Workers, by_id, finished, remote, wait_until, workers
from tests.integration.fleet.test_fleet import host, submit  # noqa: F401 - the lane host fixture
from tests.postgres import Cluster

PASSWORD = "fleet-db-password-0123456789"


@pytest.fixture
def url(postgres: Cluster, monkeypatch: pytest.MonkeyPatch) -> str:
    """The database's URL with a password in it (the test cluster trusts, and ignores it)."""
    made = postgres.new_database().replace("postgres@", f"postgres:{PASSWORD}@")
    monkeypatch.setenv("AUTOPILOT_CODEX_DATABASE_URL", made)
    return made


@pytest.fixture
def rig(tmp_path: Path, url: str) -> Iterator[Workers]:
    yield from workers(tmp_path, url)


def test_neither_the_manager_key_nor_the_database_url_reaches_an_implementer(
    tmp_path: Path,
    rig: Workers,
    url: str,
    manager: FakeOpenAI,
    host: Path,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    loot = tmp_path / "loot"
    monkeypatch.setenv("LANE_HOST_SNOOP", str(loot))
    home = rig.home("a")
    beside = [home.parent / f"{home.name}-fleet", home.parent / f"{home.name}-lanes"]
    monkeypatch.setenv("LANE_HOST_SNOOP_DIRS", os.pathsep.join(map(str, beside)))
    assert os.environ["OPENAI_API_KEY"] == PLANTED_KEY
    manager.enqueue({"summary": "s", "tasks": [task(1, depends_on=[])]}, schema="Plan")
    manager.enqueue(review_body("approve"), schema="Review")
    fleet_id = submit(capsys, remote(tmp_path), "write the task file")
    rig.start("a", "--lanes", "1")
    wait_until(lambda: finished(url, 1), rig, "the run ended")
    assert by_id(url)[fleet_id].result["status"] == "complete"
    found = loot.read_bytes()
    # The attacker ran (its environment is there, and the clone's files).
    assert b'"LANE_HOST_LOG"' in found and b"# demo" in found
    for secret in (PLANTED_KEY, PASSWORD, url):
        assert secret.encode() not in found, secret
    # The clone, which the implementer reaches, is outside the state home the wall hides.
    assert not any(p.is_relative_to(home) for p in beside)
