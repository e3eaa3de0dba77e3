"""What the supervisor's own sandbox costs: the bridge's git walled in bubblewrap against the
same git unwalled, per call and per Stop, in one process and one run.

Per call: `rev-parse`, `status` and a review's whole `diff_since` (six calls) through the
runner, walled and unwalled, interleaved in a shuffled order each round (medians). Per Stop: the
real Stop hook of a running loop (`python -m autopilot_codex hook Stop`, run in this process so
that only the sandbox differs), on a repository of 2,000 files with a small diff, its state put
back before each run, with a fake manager that answers at once: so the figure is the hook's own
time, whose git calls are counted. The sandbox is switched by setting this process's answer to
"is there a wall" (`sandbox.jail`), the same seam the tests use; there is no other switch.

Target: a walled Stop takes at most twice the unwalled one (measured here at 1.65x with 16
git calls, on a machine loaded to 4.5 runnable tasks a core). A walled call adds a fork of
bubblewrap and its namespaces: about 3-5 ms on an idle machine, and much more under load,
where the added time is waiting, not CPU (the CPU ratio stays near 1x): tearing down a mount
namespace waits for the kernel (an RCU grace period), which a loaded machine stretches. Read
it against the Stop's manager call, seconds in real use.

    python bench/walled_git.py [--json FILE]
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import (
    FakeManager,
    Row,
    Snapshot,
    build_repo,
    emit,
    hook_env,
    hook_payload,
    make_diff,
    median,
    plan_loop,
    real_python,
    rounds,
)
from benchlib import workdir as bench_workdir

BENCH = "walled_git"
STOP_LIMIT = 2.0


def _cpu() -> float:
    """CPU seconds of this process and its finished children: steadier than wall time on a
    loaded machine (the sandbox's namespaces are built in the kernel on bubblewrap's time)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _timed(
    cases: dict[str, Callable[[], object]], n: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    for call in cases.values():
        call()
    wall: dict[str, list[float]] = {name: [] for name in cases}
    cpu: dict[str, list[float]] = {name: [] for name in cases}
    rng = random.Random(11)
    for _ in range(n):
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            used = _cpu()
            start = time.perf_counter()
            cases[name]()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(_cpu() - used)
    return wall, cpu


def _row(
    samples: tuple[dict[str, list[float]], dict[str, list[float]]],
    what: str,
    figure: str,
    limit: float | None = None,
) -> Row:
    wall, cpu = samples
    value = median(wall[f"walled {what}"]) * 1000
    base = median(wall[f"unwalled {what}"]) * 1000
    used = median(cpu[f"walled {what}"]) * 1000
    used_base = median(cpu[f"unwalled {what}"]) * 1000
    extra = value - base
    return Row(
        BENCH,
        figure,
        value,
        "ms",
        f"unwalled {what}",
        base,
        value / base,
        f"<= {limit:g}x" if limit is not None else "",
        (value / base <= limit) if limit is not None else None,
        f"+{extra:.2f} ms; cpu +{used - used_base:.2f} ms",
        used / max(used_base, 1e-9),
    )


def main() -> None:
    from autopilot_codex import gitrepo
    from autopilot_codex.__main__ import run as hook_main
    from autopilot_codex.gitrepo import runner
    from autopilot_codex.sandbox import jail

    walled = jail.probe()
    if not walled.ok:
        print(f"no sandbox here: {walled.note()}")
        return
    unwalled = jail.Wall(walled.system, False, why="the bench's baseline")
    calls = [0]
    spawn = runner._spawn

    def counted(
        command: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None
    ) -> tuple[int, bytes, bytes]:
        calls[0] += 1
        return spawn(command, cwd, env, stdin)

    runner._spawn = counted

    with bench_workdir("walled-git") as tmp, FakeManager() as manager:
        repo = build_repo(tmp / "repo", 2000)
        home = tmp / "state-home"
        env = hook_env(home, real_python(), manager.base_url, AUTOPILOT_CODEX_HELPER="0")
        Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
        plan_loop(repo, env)
        base = gitrepo.head_sha(repo)
        make_diff(repo, 60)
        os.environ.clear()
        os.environ.update(env)
        snapshot = Snapshot(repo, home)
        stop = hook_payload("Stop", repo)
        stop_calls: dict[str, int] = {}

        def with_wall(known: jail.Wall, call: Callable[[], object]) -> Callable[[], object]:
            def timed() -> object:
                jail._known = known
                return call()

            return timed

        def one_stop(label: str) -> Callable[[], object]:
            def call() -> object:
                snapshot.restore()
                sys.stdin = io.TextIOWrapper(io.BytesIO(stop))
                sys.argv = ["autopilot-codex", "hook", "Stop", "--host", "claude"]
                calls[0] = 0
                with contextlib.redirect_stdout(io.StringIO()):
                    hook_main()
                stop_calls[label] = calls[0]
                return None

            return call

        cases: dict[str, Callable[[], object]] = {}
        for label, known in (("walled", walled), ("unwalled", unwalled)):
            cases[f"{label} rev-parse"] = with_wall(
                known, lambda: gitrepo.run_git(repo, "rev-parse", "HEAD")
            )
            cases[f"{label} status"] = with_wall(
                known, lambda: gitrepo.run_git(repo, "status", "--porcelain")
            )
            cases[f"{label} diff_since"] = with_wall(known, lambda: gitrepo.diff_since(repo, base))
            cases[f"{label} Stop"] = with_wall(known, one_stop(label))
        samples = _timed(cases, rounds(30, 5))
    rows = [
        _row(samples, "rev-parse", "one call: rev-parse"),
        _row(samples, "status", "one call: status"),
        _row(samples, "diff_since", "a review's diff (6 calls)"),
        _row(samples, "Stop", "a Stop hook, in process", limit=STOP_LIMIT),
    ]
    emit(
        rows,
        [
            f"{len(samples[0]['walled Stop'])} interleaved rounds; 2,000-file repository",
            f"git calls per Stop: {stop_calls.get('walled', 0)} walled, "
            f"{stop_calls.get('unwalled', 0)} unwalled; sandbox {walled.binary}",
        ],
    )


if __name__ == "__main__":
    main()
