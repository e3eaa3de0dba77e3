"""Lanes against one lane: three equal independent tasks, `run --lanes 3` and `run --lanes 1`,
with a fake implementer that takes a fixed latency per call (two calls a task: the work and
the verifier) and the fake OpenAI server as the manager (one plan, a review per landing).

    python bench/lanes.py [--latency SECONDS]

Printed: each wall time, the ratio lanes-3 / lanes-1 (issue 37 asks ≤ 0.45), and the manager's
requests of each (they grow with the tasks: 1 plan + 3 reviews, whatever the lanes).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time

from benchlib import ROOT, git, hook_env, task, workdir

TASKS = 3
TARGET = 0.45


def one(lanes: int, latency: float) -> tuple[float, int]:
    """Wall seconds of one lanes run, and the manager's requests."""
    from tests.fakes.openai_server import FakeOpenAI

    with workdir(f"lanes{lanes}") as place, FakeOpenAI() as manager:
        repo = place / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("# bench\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "initial")
        manager.enqueue({"summary": "three", "tasks": [task(n) for n in (1, 2, 3)]}, schema="Plan")
        for _ in range(TASKS):
            review = {"decision": "approve", "summary": "ok", "findings": [], "revert_files": []}
            manager.enqueue(review, schema="Review")
        host = (
            f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests/fakes/lane_host.py'))}"
        )
        env = hook_env(
            place / "home",
            sys.executable,
            manager.base_url,
            AUTOPILOT_CODEX_CLAUDE_CMD=host,
            LANE_HOST_LOG=str(place / "host.log"),
            LANE_HOST_DELAY=str(latency),
            AUTOPILOT_CODEX_HELPER="0",
        )
        argv = ["run", "the three files", "--implementer", "claude", "--manager", "openai"]
        argv += ["--lanes", str(lanes), "--cwd", str(repo), "--json"]
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "autopilot_codex", *argv],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.monotonic() - started
        if done.returncode != 0:
            raise SystemExit(f"lanes {lanes} failed ({done.returncode}): {done.stderr[-2000:]}")
        return wall, len(manager.requests)


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--latency", type=float, default=3.0, help="seconds per implementer call")
    args = cli.parse_args()
    one_wall, one_calls = one(1, args.latency)
    three_wall, three_calls = one(3, args.latency)
    ratio = three_wall / one_wall
    print(f"lanes 1: {one_wall:.1f} s, {one_calls} manager requests")
    print(f"lanes 3: {three_wall:.1f} s, {three_calls} manager requests")
    verdict = "meets" if ratio <= TARGET else "misses"
    print(f"ratio lanes-3 / lanes-1: {ratio:.2f} ({verdict} the target {TARGET})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
