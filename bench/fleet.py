"""The fleet's load on one machine: RUNS runs submitted to a real Postgres (a throwaway cluster),
one worker taking RUNS_AT_ONCE of them at a time with LANES lanes each, every run TASKS equal
independent tasks. The implementer is the lanes' fake host with a fixed latency per call (two
calls a task: the work and the verifier), the manager the fake OpenAI server.

    python bench/fleet.py [--runs 4] [--runs-at-once 2] [--lanes 3] [--tasks 3] [--latency 3]

Printed: the wall time; runs and lane tasks finished per minute by the one worker; the most
implementers that ran at once; the manager's requests per minute; and the overhead ratio, wall
time / the time the implementers alone needed at that concurrency (1.00 = the fleet adds
nothing).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, git, hook_env, task, workdir


def most_at_once(log: Path) -> int:
    """The most implementer calls running at one time, from the host's start and end lines."""
    moments = []
    for line in log.read_text().splitlines():
        event = json.loads(line)
        moments.append((event["t"], 1 if event["event"] == "start" else -1))
    running = best = 0
    for _, step in sorted(moments):
        running += step
        best = max(best, running)
    return best


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--runs", type=int, default=4)
    cli.add_argument("--runs-at-once", type=int, default=2)
    cli.add_argument("--lanes", type=int, default=3)
    cli.add_argument("--tasks", type=int, default=3)
    cli.add_argument("--latency", type=float, default=3.0, help="seconds per implementer call")
    args = cli.parse_args()
    from tests.fakes.openai_server import FakeOpenAI
    from tests.postgres import cluster

    with workdir("fleet") as place, FakeOpenAI() as manager, cluster() as pg:
        source = place / "source"
        source.mkdir()
        git(source, "init", "-q", "-b", "main")
        (source / "README.md").write_text("# bench\n")
        git(source, "add", "-A")
        git(source, "commit", "-qm", "initial")
        bare = place / "remote.git"
        git(place, "clone", "-q", "--bare", str(source), str(bare))
        review = {"decision": "approve", "summary": "ok", "findings": [], "revert_files": []}
        for _ in range(args.runs):
            plan = {"summary": "s", "tasks": [task(n) for n in range(1, args.tasks + 1)]}
            manager.enqueue(plan, schema="Plan")
            for _ in range(args.tasks):
                manager.enqueue(review, schema="Review")
        host = (
            f"{shlex.quote(sys.executable)} {shlex.quote(str(ROOT / 'tests/fakes/lane_host.py'))}"
        )
        log = place / "host.log"
        env = hook_env(
            place / "home",
            sys.executable,
            manager.base_url,
            AUTOPILOT_CODEX_CLAUDE_CMD=host,
            LANE_HOST_LOG=str(log),
            LANE_HOST_DELAY=str(args.latency),
            AUTOPILOT_CODEX_HELPER="0",
            AUTOPILOT_CODEX_DATABASE_URL=pg.new_database(),
        )
        fleet = [sys.executable, "-m", "autopilot_codex"]
        for n in range(args.runs):
            goal = [f"bench run {n}", "--implementer", "claude", "--manager", "openai"]
            subprocess.run(
                [*fleet, "submit", str(bare), *goal], env=env, check=True, capture_output=True
            )
        started = time.monotonic()
        worker = subprocess.Popen(
            [*fleet, "worker", "--executor-id", "bench", "--runs", str(args.runs_at_once),
             "--lanes", str(args.lanes), "--push-every", "30"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        try:
            wall = wait_all(env, args.runs, started, worker)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait()
        lane_tasks = args.runs * args.tasks
        at_once = min(args.runs_at_once, args.runs) * min(args.lanes, args.tasks)
        ideal = math.ceil(lane_tasks / at_once) * 2 * args.latency
        print(f"{args.runs} runs x {args.tasks} tasks, 1 worker: {args.runs_at_once} runs at once, "
              f"{args.lanes} lanes each, {args.latency:g} s per implementer call ({os.cpu_count()} cores)")  # fmt: skip
        print(f"wall time: {wall:.1f} s")
        print(f"runs per minute per worker: {args.runs / wall * 60:.1f}")
        print(f"lane tasks per minute per worker: {lane_tasks / wall * 60:.1f}")
        print(f"most implementers at once: {most_at_once(log)} (of {at_once} possible)")
        print(
            f"manager requests: {len(manager.requests)}, per minute: {len(manager.requests) / wall * 60:.1f}"
        )
        print(f"overhead ratio wall / implementers alone: {wall / ideal:.2f}")
    return 0


def wait_all(
    env: dict[str, str], runs: int, started: float, worker: subprocess.Popen[bytes]
) -> float:
    os.environ["AUTOPILOT_CODEX_DATABASE_URL"] = env["AUTOPILOT_CODEX_DATABASE_URL"]
    from autopilot_codex.fleet.records import runs as fleet_runs

    while True:
        found = fleet_runs(env["AUTOPILOT_CODEX_DATABASE_URL"])
        if len(found) == runs and all(r.status in ("SUCCESS", "ERROR") for r in found):
            wall = time.monotonic() - started
            bad = [
                r for r in found if r.status != "SUCCESS" or r.result.get("status") != "complete"
            ]
            if bad:
                raise SystemExit(f"runs did not complete: {bad}")
            return wall
        if worker.poll() is not None:
            raise SystemExit(f"the worker ended ({worker.returncode})")
        time.sleep(0.2)


if __name__ == "__main__":
    raise SystemExit(main())
