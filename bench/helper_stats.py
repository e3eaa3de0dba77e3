"""The resident helper in the benchmarks: warm before timing, and its work counted.

A hook the helper answers runs in a child of the helper, not in the hook's process tree, so
`RUSAGE_CHILDREN` would see only the hook's own small part. With
AUTOPILOT_CODEX_HELPER_STATS=1 in the environment the helper starts with, it writes each
child's CPU seconds to a file in its run folder; `HelperCpu` waits for that line after every
run of a case and adds it to the case's CPU sample, so the CPU ratios count all the work.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from benchlib import Case, Samples, expect

STATS_ENV = {"AUTOPILOT_CODEX_HELPER_STATS": "1"}
# No helper: the direct path, timed beside it as context.
DIRECT_ENV = {"AUTOPILOT_CODEX_HELPER": "0"}


def warm(home: Path, run_hook: Callable[[], object], timeout: float = 120.0) -> None:
    """Run an admitted hook (which starts the helper) until a helper listens in `home`."""
    deadline = time.monotonic() + timeout
    while True:
        run_hook()
        if list((home / "run").glob("helper-*.sock")):
            run_hook()  # the first hook through it: its waiting child is ready
            return
        expect(time.monotonic() < deadline, "the resident helper never started")
        time.sleep(0.5)


class HelperCpu:
    """Per case, the CPU seconds of the helper's child that answered each run."""

    def __init__(self, home: Path, warmup: int = 2) -> None:
        self.run = home / "run"
        self.warmup = warmup
        self.extra: dict[str, list[float]] = {}

    def _lines(self) -> list[float]:
        values: list[float] = []
        for path in sorted(self.run.glob("helper-*.cpu")):
            values += [float(x) for x in path.read_text().split()]
        return values

    def wrap(self, case: Case) -> Case:
        """The case, with its helper child's CPU time recorded after each run."""
        seen: list[int] = []
        setup, check = case.setup, case.check

        def before() -> None:
            if setup is not None:
                setup()
            seen[:] = [len(self._lines())]

        def after(proc: subprocess.CompletedProcess[bytes]) -> None:
            if check is not None:
                check(proc)
            else:
                expect(proc.returncode == 0, f"{case.name}: exit {proc.returncode}")
            deadline = time.monotonic() + 10.0
            while len(lines := self._lines()) <= seen[0]:
                expect(time.monotonic() < deadline, f"{case.name}: the helper did not answer")
                time.sleep(0.005)
            self.extra.setdefault(case.name, []).append(sum(lines[seen[0] :]))

        return replace(case, setup=before, check=after)

    def add_to(self, samples: Samples) -> None:
        for name, extra in self.extra.items():
            timed = extra[self.warmup :]
            samples.cpu[name] = [c + e for c, e in zip(samples.cpu[name], timed, strict=True)]
