"""The fleet's test rig: a bare remote in tmp_path, worker processes (each its own state home,
clone and executor id) and a wait on the shared database for a run's end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autopilot_codex.fleet.records import FleetRun, runs
from tests.conftest import git, make_repo

# Generous: a deadline that only fails when the thing never happens (CI shares two cores).
DEADLINE_S = 240.0


def remote(tmp_path: Path) -> Path:
    """A bare repository in tmp_path, as every worker's remote (a file URL)."""
    source = make_repo(tmp_path / "source")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(bare))
    return bare


@dataclass
class Workers:
    tmp_path: Path
    url: str
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def home(self, executor: str) -> Path:
        return self.tmp_path / f"home-{executor}"

    def said(self, executor: str) -> Path:
        return self.tmp_path / f"worker-{executor}.err"

    def start(self, executor: str, *args: str) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "AUTOPILOT_CODEX_HOME": str(self.home(executor)),
            "AUTOPILOT_CODEX_DATABASE_URL": self.url,
        }
        with self.said(executor).open("ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "autopilot_codex", "worker", "--executor-id", executor,
                 "--push-every", "1", *args],
                env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
            )  # fmt: skip
        self.procs[executor] = proc
        return proc

    def kill(self, executor: str) -> None:
        """The machine dies: the worker and its run's driver (its process group), not the
        lanes, which are process groups of their own (as when a driver is killed)."""
        proc = self.procs.pop(executor)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def stop_all(self) -> None:
        for executor in list(self.procs):
            proc = self.procs.pop(executor)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()

    def alive(self) -> None:
        for executor, proc in self.procs.items():
            assert proc.poll() is None, self.said(executor).read_text()


def workers(tmp_path: Path, url: str) -> Iterator[Workers]:
    rig = Workers(tmp_path, url)
    try:
        yield rig
    finally:
        rig.stop_all()


def wait_until(what: Callable[[], bool], rig: Workers, why: str) -> None:
    give_up = time.monotonic() + DEADLINE_S
    while not what():
        rig.alive()
        assert time.monotonic() < give_up, f"never happened: {why}"
        time.sleep(0.2)


def by_id(url: str) -> dict[str, FleetRun]:
    return {r.fleet_id: r for r in runs(url)}


def finished(url: str, count: int) -> bool:
    found = by_id(url)
    return len(found) == count and all(r.status in ("SUCCESS", "ERROR") for r in found.values())
