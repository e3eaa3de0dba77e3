"""What the hardened git runner costs: one git call through `gitrepo.run_git` (trusted binary,
allowlisted environment, every override, explicit git directory and work tree) against the
plain call (`git -c core.quotepath=off ...` from PATH with the whole environment, no timeout:
stricter than today's `run_git`, whose 60 s timeout makes Python poll the exit with sleeps; that
one is a row of its own), and a review's whole `diff_since` against the three plain calls it used to be.

Both sides run in this process, interleaved in a shuffled order each round, on a repository
of 2,000 committed files with a small diff; figures are medians over the rounds. The target:
a hardened call costs under 2 ms more than the plain one. The "filter" rows have a clean
filter defined in the repository's config and the runner's per-process cache emptied before
each call: the cost of the extra `git config` listing a hook process pays once.

    python bench/git_runner.py [--json FILE]
"""

from __future__ import annotations

import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import GIT_ENV, Row, build_repo, clean_environ, emit, git, make_diff, median, rounds
from benchlib import workdir as bench_workdir

BENCH = "git_runner"
LIMIT_MS = 2.0


def _plain(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args], cwd=repo, capture_output=True, check=True
    ).stdout


def _today(repo: Path, *args: str) -> bytes:
    """The bridge's run_git before the runner: the same call with its 60 s timeout."""
    return subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=repo,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout


def _old_diff(repo: Path, base: str) -> None:
    """The three git calls of the review's diff before the runner (content reads left out)."""
    _plain(repo, "diff", base, "--name-status", "--find-renames", "--no-ext-diff", "-z")
    _plain(repo, "ls-files", "--others", "--exclude-standard", "-z")
    _plain(repo, "diff", base, "--no-color", "--no-ext-diff", "--find-renames")


def _timed(cases: dict[str, Callable[[], object]], n: int) -> dict[str, list[float]]:
    for call in cases.values():
        call()
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


def _row(
    samples: dict[str, list[float]], case: str, base: str, figure: str, limit: bool = True
) -> Row:
    value = median(samples[case]) * 1000
    baseline = median(samples[base]) * 1000
    extra = value - baseline
    return Row(
        BENCH,
        figure,
        value,
        "ms",
        base,
        baseline,
        value / baseline,
        f"+< {LIMIT_MS:g} ms" if limit else "",
        (extra < LIMIT_MS) if limit else None,
        f"+{extra:.2f} ms",
    )


def main() -> None:
    import os

    os.environ.clear()
    os.environ.update({**clean_environ(), **GIT_ENV})
    from autopilot_codex import gitrepo
    from autopilot_codex.gitrepo import filters

    with bench_workdir("git-runner") as tmp:
        repo = build_repo(tmp / "repo", 2000)
        filtered = build_repo(tmp / "filtered", 2000)
        git(filtered, "config", "filter.lfsish.clean", "cat")
        base = gitrepo.head_sha(repo)
        for where in (repo, filtered):
            make_diff(where, 60)
            (where / "new.txt").write_text("new\n")

        def hardened_filtered() -> object:
            filters._cache.clear()
            return gitrepo.run_git(filtered, "status", "--porcelain")

        cases: dict[str, Callable[[], object]] = {
            "plain rev-parse": lambda: _plain(repo, "rev-parse", "HEAD"),
            "today's run_git rev-parse": lambda: _today(repo, "rev-parse", "HEAD"),
            "hardened rev-parse": lambda: gitrepo.run_git(repo, "rev-parse", "HEAD"),
            "plain status": lambda: _plain(repo, "status", "--porcelain"),
            "hardened status": lambda: gitrepo.run_git(repo, "status", "--porcelain"),
            "plain status, filter": lambda: _plain(filtered, "status", "--porcelain"),
            "hardened status, filter": hardened_filtered,
            "plain diff (3 calls)": lambda: _old_diff(repo, base),
            "diff_since": lambda: gitrepo.diff_since(repo, base),
        }
        samples = _timed(cases, rounds(40, 8))
    rows = [
        _row(samples, "hardened rev-parse", "plain rev-parse", "one call: rev-parse"),
        _row(
            samples,
            "hardened rev-parse",
            "today's run_git rev-parse",
            "one call: rev-parse, against today's run_git",
        ),
        _row(samples, "hardened status", "plain status", "one call: status"),
        _row(
            samples,
            "hardened status, filter",
            "plain status, filter",
            "a call with a filter in the config",
        ),
        _row(
            samples,
            "diff_since",
            "plain diff (3 calls)",
            "a review's diff (6 calls, shows what hides)",
            limit=False,
        ),
    ]
    emit(rows, [f"{len(next(iter(samples.values())))} interleaved rounds; 2,000-file repository"])


if __name__ == "__main__":
    main()
