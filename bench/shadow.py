"""What the shadow history (issue 34) adds to a hook, on a 5,000-file and a 50,000-file
repository.

The shadow is the only work a hook does now that it did not before: `shadow.hook.on_hook`,
which starts the snapshot in a detached worker (`shadow/background.py`) and, at a Stop, first
waits for the turn's last snapshot and reads what it found lost. So its time is the hook's added
time ("added" rows), timed in this process with a running loop. The worker's snapshot itself
runs off the hook's path ("worker" rows): a tool that can change files waits for it only if it
starts before the snapshot is written. Everything is interleaved in a shuffled order each
round with `git status` (what one look at the tree costs there, for scale).

Cases: an edit tool's PostToolUse (only its file is staged), a shell command's PostToolUse and
a Stop (the whole tree is walked; unchanged files cost a stat each), each over an unchanged
tree and over one edited file.

Targets (issue 34): an unchanged tree adds < 5 ms, a typical edit < 20 ms. The first snapshot
of a loop (at `plan`, not in a hook) is reported once.

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

Case = Callable[[], float]


def _timed(cases: dict[str, Case], n: int) -> dict[str, list[float]]:
    for call in cases.values():
        call()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    rng = random.Random(7)
    for _ in range(n):
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            samples[name].append(cases[name]())
    return samples


def _clock(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _cases(repo: Path, home: Path) -> tuple[dict[str, Case], float]:
    from autopilot_codex import hosts
    from autopilot_codex.hookio import HookInput
    from autopilot_codex.shadow import repo as shadow_repo
    from autopilot_codex.shadow import snapshot
    from autopilot_codex.shadow.hook import on_hook
    from autopilot_codex.store import Store

    shadow = shadow_repo.at(repo, home)
    store = Store(repo, home=home)
    host = hosts.get("claude")
    first = _clock(lambda: snapshot.take(shadow, "start"))
    edited = tracked_file(repo, 7)
    other = tracked_file(repo, 11)
    counter = iter(range(10**9))

    def edit(target: Path) -> None:
        target.write_text(f"# edit {next(counter)}\n")

    def hook(event: str, tool: str = "", change: Path | None = None) -> Case:
        data = {"file_path": str(edited)} if tool == "Edit" else {"command": "true"}
        payload = HookInput(event=event, tool_name=tool, tool_input=data)

        def case() -> float:
            if change is not None:
                edit(change)
            took = _clock(lambda: on_hook(payload, store, host))
            shadow_repo.settle(shadow, 600)  # the worker's snapshot, untimed here
            return took

        return case

    def worker(paths: list[str] | None, change: Path | None) -> Case:
        def case() -> float:
            if change is not None:
                edit(change)
            return _clock(lambda: snapshot.take(shadow, "bench", paths=paths))

        return case

    cases: dict[str, Case] = {
        "git status": lambda: _clock(
            lambda: subprocess.run(
                ["git", "status", "--porcelain"], cwd=repo, capture_output=True, check=True
            )
        ),
        "added: edit hook, file unchanged": hook("PostToolUse", "Edit"),
        "added: edit hook, file edited": hook("PostToolUse", "Edit", edited),
        "added: shell hook, tree unchanged": hook("PostToolUse", "Bash"),
        "added: shell hook, one file edited": hook("PostToolUse", "Bash", other),
        "added: Stop, tree unchanged": hook("Stop"),
        "added: Stop, one file edited": hook("Stop", "", other),
        "worker: edit, file edited": worker([str(edited)], edited),
        "worker: whole tree, unchanged": worker(None, None),
        "worker: whole tree, one file edited": worker(None, other),
    }
    return cases, first


LIMITS = {
    "added: edit hook, file unchanged": UNCHANGED_MS,
    "added: edit hook, file edited": EDIT_MS,
    "added: shell hook, tree unchanged": UNCHANGED_MS,
    "added: shell hook, one file edited": EDIT_MS,
    "added: Stop, tree unchanged": UNCHANGED_MS,
    "added: Stop, one file edited": EDIT_MS,
}


def _row(samples: dict[str, list[float]], case: str, size: str) -> Row:
    value = median(samples[case]) * 1000
    base = median(samples["git status"]) * 1000
    limit = LIMITS.get(case)
    return Row(
        BENCH,
        f"{size}: {case}",
        value,
        "ms",
        "git status",
        base,
        value / base,
        f"+< {limit:g} ms" if limit is not None else "",
        (value < limit) if limit is not None else None,
        f"+{value:.2f} ms" if limit is not None else "off the hook's path",
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
            rows += [_row(samples, case, label) for case in cases if case != "git status"]
            notes.append(f"{label}: the loop's first snapshot (at plan) took {first * 1000:.0f} ms")
    emit(rows, notes)


if __name__ == "__main__":
    main()
