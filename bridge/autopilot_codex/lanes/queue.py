"""The merge queue's mechanics: one lane at a time onto the integration branch, never forced.

A landing: the merge computed by `git merge-tree --write-tree` (objects only, no work tree);
a conflict is refused. The merge commit is made (`commit-tree`, two parents) but not yet on
any branch; the user's checks run on its tree in a worktree of its own, walled as every check
is, removed after; red is refused. Then the review (the manager, wired by the driver); then
the integration ref moves by compare-and-swap (`update-ref <ref> <new> <old>`), so a merge
made by anyone else meanwhile is never overwritten: the landing starts again on top of it.

A lock of its own (`lock_path`, in the state home, out of the lanes' reach) makes landings of
one run one at a time, across threads and processes; the compare-and-swap is what holds
without it.
"""

from __future__ import annotations

import fcntl
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..checks.run import CheckResult, CheckSpec, failure_reason, passed, run_checks
from ..errors import BridgeError
from ..gitrepo import Location, identity, locate, run_bytes, run_git
from ..manager.prompts import bound_diff
from ..paths import state_home
from .names import component
from .worktrees import (
    PART,
    attach,
    commit_sha,
    contains,
    detach,
    integration_branch,
    lane_branch,
    lanes_home,
    move,
)

# The lane's diff kept for the manager's follow-up task.
DIFF_CHARS_MAX = 60_000
# Landings started again after the integration branch moved under one; past it, something
# else keeps moving the branch and the caller is told.
CAS_TRIES = 3
# `--text`: a text file with one NUL byte would show as "Binary files differ", its content
# never seen by the review that approves it.
_DIFF_FLAGS = (
    "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--no-relative", "--text",
)  # fmt: skip


@dataclass(frozen=True)
class Merged:
    sha: str


@dataclass(frozen=True)
class Refused:
    reason: Literal["conflict", "checks", "review", "empty"]
    detail: str
    diff: str


Review = Callable[[str], tuple[bool, str]]


def land(
    repo: Path,
    run: str,
    task_id: str,
    *,
    checks: Sequence[CheckSpec] = (),
    checks_env: Sequence[str] = (),
    review: Review | None = None,
    expected: str | None = None,
) -> Merged | Refused:
    """Merge the lane's branch into the integration branch, or say why not (nothing moved).

    `expected`: the integration head as the caller's own record of the queue has it (kept
    where no lane can write). A lane's implementer may be able to write the repository's refs;
    given `expected`, a branch moved outside the queue is an error, not a base to build on.
    """
    with _locked(repo, run):
        _sweep(repo, run)
        for _ in range(CAS_TRIES):
            outcome = _attempt(repo, run, task_id, checks, checks_env, review, expected)
            if outcome is not None:
                return outcome
    raise BridgeError(f"{integration_branch(run)} kept moving while task {task_id!r} landed")


def _attempt(
    repo: Path,
    run: str,
    task_id: str,
    checks: Sequence[CheckSpec],
    checks_env: Sequence[str],
    review: Review | None,
    expected: str | None,
) -> Merged | Refused | None:
    target = f"refs/heads/{integration_branch(run)}"
    source = f"refs/heads/{lane_branch(run, task_id)}"
    base = commit_sha(repo, target)
    lane = commit_sha(repo, source)
    if base is None or lane is None:
        raise BridgeError(f"task {task_id!r} of run {run!r} has no lane or integration branch")
    if expected is not None and base != expected:
        raise BridgeError(
            f"{integration_branch(run)} is at {base[:12]}, not at {expected[:12]} where the "
            "queue left it: something outside the queue moved it"
        )
    if contains(repo, target, lane):
        return Merged(base)
    fork = run_git(repo, "merge-base", base, lane, ok_codes=(0, 1)).strip()
    whole = run_git(repo, "diff", *_DIFF_FLAGS, fork or base, lane, "--")
    diff = lane_diff(whole)
    if not fork:
        detail = "The lane's branch shares no history with the integration branch."
        return Refused("conflict", detail, diff)
    scratch = _scratch(repo, run) / f"merge-{secrets.token_hex(8)}"
    tree, conflicts = merge_tree(repo, base, lane, scratch)
    if tree is None:
        return Refused("conflict", conflicts, diff)
    message = f"Merge task {task_id} ({lane_branch(run, task_id)}) into {integration_branch(run)}"
    commit = run_git(
        repo, "commit-tree", tree, "-p", base, "-p", lane, "-m", message, author=identity(repo)
    ).strip()
    if checks:
        results = _checked(repo, run, commit, checks, checks_env)
        if not passed(results):
            return Refused("checks", failure_reason(results), diff)
    if review is not None:
        if diff != whole:
            # Cut, it could hide anything past the cut: never approved unseen.
            why = (
                f"The lane's diff is {len(whole)} characters, more than a review reads whole "
                f"({DIFF_CHARS_MAX}): split the task so each part can be reviewed."
            )
            return Refused("review", why, diff)
        approved, why = review(diff)
        if not approved:
            return Refused("review", why, diff)
    return Merged(commit) if move(repo, target, commit, base) else None


def merge_tree(repo: Path, base: str, lane: str, scratch: Path) -> tuple[str | None, str]:
    """The merged tree and "", or None and what conflicts.

    A merge driver the repository's config defines is a program: each is replaced by `false`,
    so a file it would merge is a conflict, never a program of the implementer's choosing run,
    nor a silent merge that keeps one side. git writes a driver's files in its work tree: the
    merge runs over `scratch`, an empty folder of its own (made and removed here), which also
    keeps the user's tree, and its `.gitattributes`, out of the merge.
    """
    drivers = _merge_drivers(repo)
    odd = [d for d in drivers if "=" in d or "\n" in d]
    if odd:
        return None, f"the repository's config defines merge drivers lanes cannot switch off: {odd}"
    # And git's own `union`, no program but a silent merge of a conflict (both sides' lines),
    # which `.git/info/attributes` or `merge.default` can name: a driver of the config's name
    # comes before the built-in one.
    names = list(dict.fromkeys([*drivers, "union"]))
    blank = [arg for d in names for arg in ("-c", f"merge.{d}.driver=false")]
    args = (*blank, "merge-tree", "--write-tree", "--no-messages", "--name-only", base, lane)
    found = locate(repo)
    where = Location(scratch, found.git_dir, found.common_dir)
    scratch.mkdir(parents=True)
    try:
        try:
            return _text(where, args, (0,)).splitlines()[0], ""
        except BridgeError:
            out = _text(where, args, (1,))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    files = [line for line in out.splitlines()[1:] if line]
    return None, "The lane's branch conflicts with the integration branch in: " + ", ".join(files)


def _text(where: Location, args: Sequence[str], ok_codes: tuple[int, ...]) -> str:
    return run_bytes(where, *args, ok_codes=ok_codes).decode("utf-8", "replace")


def lane_diff(whole: str) -> str:
    """The lane's diff bounded to DIFF_CHARS_MAX: cut, every file keeps its name and a fair
    share (a large file first never pushes a later one out of what the manager reads)."""
    if len(whole) <= DIFF_CHARS_MAX:
        return whole
    note = f"\n[diff cut: {len(whole)} characters in all]\n"
    return bound_diff(whole, DIFF_CHARS_MAX - len(note)) + note


def _merge_drivers(repo: Path) -> list[str]:
    out = run_bytes(repo, "config", "-z", "--get-regexp", r"^merge\..*\.driver$", ok_codes=(0, 1))
    names: list[str] = []
    for record in out.split(b"\0"):
        key = record.partition(b"\n")[0].decode("utf-8", "replace")
        if key.startswith("merge.") and key.endswith(".driver") and key.count(".") >= 2:
            names.append(key[len("merge.") : -len(".driver")])
    return list(dict.fromkeys(names))


def _sweep(repo: Path, run: str) -> None:
    """Remove what a landing killed mid-way left (its checks' worktree, its merge folder):
    under the lock, no other landing of the run is using them."""
    common = locate(repo).common_dir
    for place in _scratch(repo, run).glob("checks-*"):
        # One killed while `attach` filled it is still named `<name>.part`; its record is not.
        name = f"autopilot-{place.name.removesuffix(PART)}"
        detach(Location(place, common / "worktrees" / name, common))
    shutil.rmtree(_scratch(repo, run), ignore_errors=True)


def _scratch(repo: Path, run: str) -> Path:
    """The landings' own folders: `.queue`, a name no task id is escaped to (a dot never is),
    so sweeping it never reaches a lane's worktree."""
    return lanes_home(repo) / component(run) / ".queue"


def _checked(
    repo: Path, run: str, commit: str, checks: Sequence[CheckSpec], checks_env: Sequence[str]
) -> list[CheckResult]:
    place = _scratch(repo, run) / f"checks-{secrets.token_hex(8)}"
    where = attach(repo, place, commit, f"autopilot-{place.name}")
    try:
        return run_checks(place, checks, env_names=checks_env)
    finally:
        detach(where)


@contextmanager
def _locked(repo: Path, run: str) -> Iterator[None]:
    with lock_path(repo, run).open("a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def lock_path(repo: Path, run: str) -> Path:
    """The queue's lock: in the state home, which the wall hides from every lane. Beside the
    lanes it could be opened by any of them, and a read-only handle takes an exclusive flock:
    a lane holding it would stop every landing, and the driver with them."""
    folder = state_home() / "lanes" / lanes_home(repo).name
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{component(run)}.lock"
