"""What the shadow history (issue 34) adds to a hook: the snapshot each PostToolUse and each
Stop now takes, on a 5,000-file and a 50,000-file repository.

The snapshot is the only work the shadow adds to a hook, so its time is the hook's added time;
it is timed in this process, interleaved in a shuffled order each round with `git status`
(what one look at the tree costs there, for scale). Cases:

- an edit hook whose file did not change, and one whose file did (an edit tool names its file:
  only that file is staged);
- a Stop (or a shell command's PostToolUse) over an unchanged tree, and over a tree with one
  file changed (the whole tree is walked; unchanged files cost a stat each).

Targets (issue 34): an unchanged tree adds < 5 ms, a typical edit < 20 ms. The first snapshot
of a loop (at `plan`, not in a hook) is reported once, untimed by the rounds.

    python bench/shadow.py [--json FILE]
"""

from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import GIT_ENV, Row, build_repo, clean_environ, emit, median, rounds, tracked_file
from benchlib import workdir as bench_workdir

BENCH = "shadow"
UNCHANGED_MS = 5.0
EDIT_MS = 20.0


def _timed(cases: dict[str, Callable[[], object]], n: int) -> dict[str, list[float]]:
    for call in cases.values():
        call()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    rng = random.Random(7)
    for _ in range(n):
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            start = time.perf_counter()
            cases[name]()
            samples[name].append(time.perf_counter() - start)
    return samples


def _cases(repo: Path, home: Path) -> tuple[dict[str, Callable[[], object]], float]:
    from autopilot_codex.shadow import repo as shadow_repo
    from autopilot_codex.shadow import snapshot

    shadow = shadow_repo.at(repo, home)
    start = time.perf_counter()
    snapshot.take(shadow, "start")
    first = time.perf_counter() - start
    edited = tracked_file(repo, 7)
    other = tracked_file(repo, 11)
    counter = iter(range(10**9))

    def edit(target: Path) -> None:
        target.write_text(f"# edit {next(counter)}\n")

    def edit_hook_changed() -> object:
        edit(edited)
        return snapshot.take(shadow, "PostToolUse Edit", paths=[str(edited)])

    def stop_changed() -> object:
        edit(other)
        return snapshot.take(shadow, "Stop")

    cases: dict[str, Callable[[], object]] = {
        "git status": lambda: subprocess.run(
            ["git", "status", "--porcelain"], cwd=repo, capture_output=True, check=True
        ),
        "edit hook, unchanged": lambda: snapshot.take(
            shadow, "PostToolUse Edit", paths=[str(edited)]
        ),
        "edit hook, one file edited": edit_hook_changed,
        "Stop, unchanged tree": lambda: snapshot.take(shadow, "Stop"),
        "Stop, one file edited": stop_changed,
    }
    return cases, first


def _row(samples: dict[str, list[float]], case: str, size: str, limit: float) -> Row:
    value = median(samples[case]) * 1000
    base = median(samples["git status"]) * 1000
    return Row(
        BENCH,
        f"{size}: {case}",
        value,
        "ms",
        "git status",
        base,
        value / base,
        f"+< {limit:g} ms",
        value < limit,
        f"+{value:.2f} ms a hook",
    )


def main() -> None:
    os.environ.clear()
    os.environ.update({**clean_environ(), **GIT_ENV})
    rows: list[Row] = []
    notes: list[str] = []
    with bench_workdir("shadow") as tmp:
        for files, label in ((5000, "5,000 files"), (50000, "50,000 files")):
            repo = build_repo(tmp / f"repo{files}", files)
            cases, first = _cases(repo, tmp / f"home{files}")
            samples = _timed(cases, rounds(30, 6))
            rows += [
                _row(samples, "edit hook, unchanged", label, UNCHANGED_MS),
                _row(samples, "edit hook, one file edited", label, EDIT_MS),
                _row(samples, "Stop, unchanged tree", label, UNCHANGED_MS),
                _row(samples, "Stop, one file edited", label, EDIT_MS),
            ]
            notes.append(f"{label}: the loop's first snapshot (at plan) took {first * 1000:.0f} ms")
    emit(rows, notes)


if __name__ == "__main__":
    main()
