"""What reading the work tree costs as a loop starts, on a 5,000-file repository holding a
nested repository of 500 files: each reader walking the tree on its own (as before one walk fed
them) against one walk shared by all (`treewalk.shared`, as `run` starts).

The readers: the nested baseline (`gitrepo.record_nested`: its git listings, then the nested
repository's files), the wall's nested git folders (`runfiles.nested_git`) and the run files
(`runfiles.scan`). "walks only" leaves the baseline's git listings out: what the one walk
changes. Each figure is a ratio against `git status` over the same tree, measured in the same
rounds; the last row is the shared walk against the separate ones.

    python bench/loop_start.py [--json FILE]
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import GIT_ENV, Row, build_repo, clean_environ, emit, median, rounds
from benchlib import workdir as bench_workdir

BENCH = "loop_start"
NESTED_FILES = 500


def _clock(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _cases(repo: Path, baseline: Path) -> dict[str, Callable[[], float]]:
    from autopilot_codex import gitrepo, hosts, treewalk
    from autopilot_codex.gitrepo import nested
    from autopilot_codex.runfiles import nested_git, scan

    repos = nested.find(repo)
    patterns = hosts.roster().run_files()

    def start() -> None:
        gitrepo.record_nested(repo, baseline)
        nested_git(repo)
        scan(repo, patterns)

    def walks() -> None:
        nested.manifest(repo, repos)
        nested_git(repo)
        scan(repo, patterns)

    def shared(call: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            with treewalk.shared(repo):
                call()

        return run

    def status() -> None:
        subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, check=True)

    return {
        "git status": lambda: _clock(status),
        "start, each reader walks": lambda: _clock(start),
        "start, one shared walk": lambda: _clock(shared(start)),
        "walks only, each reader walks": lambda: _clock(walks),
        "walks only, one shared walk": lambda: _clock(shared(walks)),
    }


def main() -> None:
    import random

    os.environ.clear()
    os.environ.update({**clean_environ(), **GIT_ENV})
    with bench_workdir("loop-start") as tmp:
        repo = build_repo(tmp / "repo", 5000)
        build_repo(repo / "vendor" / "inner", NESTED_FILES)
        cases = _cases(repo, tmp / "home" / "nested.json")
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for call in cases.values():
            call()
        rng = random.Random(7)
        for _ in range(rounds(20, 5)):
            order = list(cases)
            rng.shuffle(order)
            for name in order:
                samples[name].append(cases[name]())
    base = median(samples["git status"]) * 1000
    rows = []
    for name in list(cases)[1:]:
        value = median(samples[name]) * 1000
        rows.append(Row(BENCH, name, value, "ms", "git status", base, value / base))
    for what in ("start", "walks only"):
        before = median(samples[f"{what}, each reader walks"]) * 1000
        after = median(samples[f"{what}, one shared walk"]) * 1000
        rows.append(
            Row(
                BENCH,
                f"{what}: one shared walk",
                after,
                "ms",
                "each reader walks",
                before,
                after / before,
                "<= 1x",
                after <= before,
            )
        )
    emit(rows)


if __name__ == "__main__":
    main()
