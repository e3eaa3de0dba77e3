"""Where a helped hook's child spends its CPU: a diagnostic, not a target.

On the loop of bench/active_hook.py this process loads the engine as the resident helper does
(`helper_server._preload`, then `gc.freeze`) and forks one child per run of the review cache
hit and the guard stop; the child runs `hookrun.run_hook` on the hook's payload, as the
helper's child does once it has taken the hook. Per case, medians of the children's figures
(CPU in ms, minor faults: copy-on-write copies of the loaded engine's pages):

- `start`: from the fork to the child's first line (the kernel's fork return, Python's
  after-fork handlers);
- `setup`: the child's first lines before the hook (admission, first touches of the import
  machinery and the interpreter's shared state);
- `hook`: `run_hook` itself, and inside it the state's load, the atomic writes and the
  background workers' starts (asked of this process, which forks them as the helper does);
- `exit`: what the child's exit costs (the kernel tearing down its copy of the address space);
- `whole`: the child's CPU as the helper's `wait4` sees it (what the bench counts).

    python bench/child_profile.py [--cprofile]

`--cprofile` prints each case's functions by cumulative CPU time (one run) instead, the first
40 (BENCH_PSTATS=N for N), and who calls those whose names match BENCH_CALLERS (a pattern).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import resource
import select
import statistics
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from active_hook import prepare, quiet
from benchlib import (
    FakeManager,
    Snapshot,
    edit_hook_payload,
    expect,
    hook_payload,
    real_python,
    rounds,
    workdir,
)

if TYPE_CHECKING:
    from autopilot_codex.helper_workers import Workers

PSTATS_LINES = int(os.environ.get("BENCH_PSTATS", "40"))
# With --cprofile: who calls the functions whose names match this pattern (e.g. `project_key`).
CALLERS = os.environ.get("BENCH_CALLERS", "")
# The parts of a hook timed on their own: (module, attribute, label).
PARTS = (
    ("autopilot_codex.store.load", "Store.load", "load"),
    ("autopilot_codex.fileio", "atomic_write_bytes", "writes"),
    ("autopilot_codex.shadow.background", "spawn", "starts"),
    ("autopilot_codex.styles.autopilot.background", "spawn", "starts"),
)
# More parts to time, as `module:attribute:label` separated by commas (BENCH_PARTS): a part
# that runs inside another is counted in both.
EXTRA_PARTS = tuple(
    tuple(part.split(":")) for part in os.environ.get("BENCH_PARTS", "").split(",") if part
)


def _usage() -> tuple[float, int]:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime, used.ru_minflt


def _timed(spent: dict[str, float], label: str, original: Callable[..., object]) -> object:
    def wrapped(*args: object, **kwargs: object) -> object:
        cpu, faults = _usage()
        try:
            return original(*args, **kwargs)
        finally:
            cpu2, faults2 = _usage()
            spent[label] = spent.get(label, 0.0) + cpu2 - cpu
            spent[f"{label} faults"] = spent.get(f"{label} faults", 0) + faults2 - faults

    return wrapped


def _time_parts(spent: dict[str, float]) -> None:
    for module_name, attr, label in PARTS + EXTRA_PARTS:
        owner: object = importlib.import_module(module_name)
        name = attr
        if "." in attr:
            cls, name = attr.split(".")
            owner = getattr(owner, cls)
        setattr(owner, name, _timed(spent, label, getattr(owner, name)))


def child_run(event: str, payload: bytes, profile: bool, start: tuple[float, int]) -> bytes:
    """In the forked child: run the hook as helper_child.run does; its figures as JSON."""
    from autopilot_codex.gate import admit
    from autopilot_codex.hookrun import run_hook

    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    admitted = admit(payload, event)
    expect(admitted is not None, "the hook was not admitted")
    assert admitted is not None  # for mypy: expect raised otherwise
    argv = [event, "--host", "claude"]
    spent: dict[str, float] = {}
    if not profile:
        _time_parts(spent)  # instrumentation, counted in `setup`
    # Only when profiling: the set touches every module's name, copying pages of the helper's.
    loaded = set(sys.modules) if profile else set()
    before = _usage()
    if profile:
        import cProfile
        import pstats
        import time

        prof = cProfile.Profile(time.process_time)
        prof.runcall(run_hook, argv, admitted)
        stats = pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative")
        stats.print_stats(PSTATS_LINES)
        if CALLERS:
            stats.print_callers(CALLERS)
    else:
        run_hook(argv, admitted)
    after = _usage()
    if profile:
        # A module the helper did not preload is imported by every hook's child.
        print("imported in the child:", sorted(set(sys.modules) - loaded), file=sys.stderr)
    figures = {
        "start": start[0],
        "start faults": start[1],
        "setup": before[0] - start[0],
        "setup faults": before[1] - start[1],
        "hook": after[0] - before[0],
        "hook faults": after[1] - before[1],
        **spent,
        "until exit": after[0],
    }
    return json.dumps(figures).encode()


def one(event: str, payload: bytes, profile: bool, workers: Workers) -> dict[str, float]:
    """One hook in a forked child; this process forks the workers it asks for, as the helper
    does (`helper_workers`)."""
    read, write = os.pipe()
    end = workers.pair()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            workers.in_child()
            if end is not None:
                from autopilot_codex import detached
                from autopilot_codex.helper_workers import asker

                detached.ASK = asker(end)
            data = child_run(event, payload, profile, _usage())
            while data:
                data = data[os.write(write, data) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    if end is not None:
        end.close()
    chunks = []
    while True:
        ready = select.select([read, *workers.ends], [], [])[0]
        workers.serve(ready)
        if read not in ready:
            continue
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status, usage = os.wait4(pid, 0)
    expect(status == 0 and bool(chunks), "the child failed")
    figures: dict[str, float] = json.loads(b"".join(chunks))
    figures["whole"] = usage.ru_utime + usage.ru_stime
    figures["whole faults"] = usage.ru_minflt
    figures["exit"] = figures["whole"] - figures.pop("until exit")
    return figures


def report(name: str, runs: list[dict[str, float]]) -> str:
    parts = []
    for key in runs[0]:
        value = statistics.median(r.get(key, 0.0) for r in runs)
        parts.append(f"{key} {value:.0f}" if "faults" in key else f"{key} {value * 1000:.2f}")
    return f"{name}: " + ", ".join(parts) + f" (ms / faults, median of {len(runs)})"


def main() -> int:
    profile = "--cprofile" in sys.argv
    with workdir("childprof") as tmp, FakeManager() as manager:
        loop, running, exhausted = prepare(tmp, real_python(), manager)
        os.environ.clear()
        os.environ.update(loop.env)
        os.environ["AUTOPILOT_CODEX_HELPER"] = "0"
        os.chdir(loop.repo)
        from autopilot_codex import helper_server
        from autopilot_codex.helper_workers import Workers

        workers = Workers()

        helper_server._preload()  # noqa: SLF001 - the helper's own warm-up, as it serves
        gc.collect()
        gc.freeze()
        edit = edit_hook_payload(loop.repo, "src/pkg0000/mod000000.py")
        cases: list[tuple[str, str, bytes, Snapshot]] = [
            ("cache hit", "PostToolUse", edit, running),
            ("guard stop", "Stop", hook_payload("Stop", loop.repo), exhausted),
        ]
        for name, event, payload, snapshot in cases:
            runs = []
            for _ in range(1 if profile else rounds(15, 5)):
                quiet(loop.repo, loop.home)
                workers.reap()
                snapshot.restore()
                runs.append(one(event, payload, profile, workers))
            print(report(name, runs))
        quiet(loop.repo, loop.home)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
