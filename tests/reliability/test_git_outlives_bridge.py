"""A bridge killed while its git holds a lock leaves no lock behind.

The wall dies with its parent; a walled git killed with the bridge (a hook killed at the host's
timeout, a `run` driver killed with -9) left its `.lock` file, and every later git call in that
repository failed until the user removed it by hand. To catch the git while it holds the lock,
the ref's reflog is a FIFO: git takes `refs/heads/x.lock`, then blocks opening the log until
the test reads it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from autopilot_codex.sandbox import wall
from tests.conftest import make_repo

DEADLINE_S = 60
CHILD = """
import sys
from pathlib import Path
from autopilot_codex.gitrepo import runner
runner.GIT_TIMEOUT_S = float(sys.argv[3])
runner.run_bytes(Path(sys.argv[1]), "update-ref", "refs/heads/x", sys.argv[2])
"""


def wait_until(done: Callable[[], bool], what: str) -> None:
    give_up = time.monotonic() + DEADLINE_S
    while not done():
        assert time.monotonic() < give_up, f"never happened: {what}"
        time.sleep(0.02)


def holding_bridge(repo: Path, limit_s: float) -> tuple[subprocess.Popen[bytes], str, Path]:
    """A bridge process whose git holds `refs/heads/x.lock`, blocked on the FIFO log."""
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    log = repo / ".git" / "logs" / "refs" / "heads" / "x"
    log.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(log)
    said = repo.parent / "bridge.err"
    with said.open("wb") as err:
        bridge = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(repo), sha, str(limit_s)], stderr=err
        )
    lock = repo / ".git" / "refs" / "heads" / "x.lock"
    wait_until(lambda: lock.exists() or bridge.poll() is not None, "git took the ref's lock")
    assert lock.exists(), said.read_text()
    return bridge, sha, log


def gits_of(sha: str) -> list[int]:
    """The processes (timeout, wall, git) still running the update of `sha`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"update-ref" in line and sha.encode() in line:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
def test_a_git_of_a_killed_bridge_finishes_and_releases_its_lock(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    bridge, sha, log = holding_bridge(repo, 60)
    bridge.send_signal(signal.SIGKILL)
    bridge.wait()
    reader = os.open(log, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ref = repo / ".git" / "refs" / "heads" / "x"
        wait_until(lambda: ref.exists() and not gits_of(sha), "the git finished")
    finally:
        os.close(reader)
    assert ref.read_text().strip() == sha
    assert not (repo / ".git" / "refs" / "heads" / "x.lock").exists()
    # The repository takes the next call.
    subprocess.run(["git", "update-ref", "refs/heads/y", sha], cwd=repo, check=True)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.skipif(not wall().ok and not Path("/usr/bin/timeout").exists(), reason="no timeout")
def test_a_git_of_a_killed_bridge_that_never_ends_is_ended_at_its_limit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    bridge, sha, _log = holding_bridge(repo, 1)
    bridge.send_signal(signal.SIGKILL)
    bridge.wait()
    # Left running, the git would wait on its log forever.
    wait_until(lambda: not gits_of(sha), "the git was ended at its limit")
