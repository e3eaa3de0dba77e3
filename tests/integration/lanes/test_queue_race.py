"""Attack first: two landings at once, or a landing racing another writer of the integration
branch, never lose a merge. The queue's lock makes landings one at a time; the compare-and-swap
(`update-ref <ref> <new> <old>`) holds even against a writer that takes no lock."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import queue, worktrees
from autopilot_codex.lanes.queue import Merged, land
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, integration, lane_with

REF = f"refs/heads/autopilot/{RUN}/integration"


def _outside_commit(repo: Path, name: str) -> str:
    """A commit on top of the integration head, written as another process would."""
    tree = git(repo, "mktree", "--missing")  # the empty tree; content does not matter here
    head = integration(repo)
    commit = git(repo, "commit-tree", tree, "-p", head, "-m", f"outside {name}")
    git(repo, "update-ref", REF, commit, head)
    return commit


def _in_history(repo: Path, commit: str) -> bool:
    done = git(repo, "rev-list", REF)
    return commit in done.split()


def test_a_writer_moving_the_branch_mid_landing_is_kept_and_the_lane_lands_on_top(
    tmp_path: Path,
) -> None:
    repo = begun(tmp_path)
    work = lane_with(repo, "T1", {"b.txt": "b\n"})
    outside: list[str] = []

    def review(diff: str) -> tuple[bool, str]:
        if not outside:  # between the merge's making and the ref's move
            outside.append(_outside_commit(repo, "one"))
        return True, "fine"

    outcome = land(repo, RUN, "T1", review=review)
    assert isinstance(outcome, Merged) and outcome.sha == integration(repo)
    assert _in_history(repo, outside[0]) and _in_history(repo, work)
    assert git(repo, "rev-parse", f"{outcome.sha}^1") == outside[0]


def test_a_branch_that_keeps_moving_is_an_error_and_loses_nothing(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    outside: list[str] = []

    def review(diff: str) -> tuple[bool, str]:
        outside.append(_outside_commit(repo, str(len(outside))))
        return True, "fine"

    with pytest.raises(BridgeError, match="kept moving"):
        land(repo, RUN, "T1", review=review)
    assert len(outside) == queue.CAS_TRIES
    assert all(_in_history(repo, c) for c in outside) and integration(repo) == outside[-1]


def test_two_landings_at_once_both_merge_one_after_the_other(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    works = {i: lane_with(repo, i, {f"{i}.txt": i}) for i in ("T1", "T2", "T3")}
    outcomes: dict[str, object] = {}
    others: list[threading.Thread] = []

    def one(task: str) -> None:
        outcomes[task] = land(repo, RUN, task, review=review)

    def review(diff: str) -> tuple[bool, str]:
        if not others:  # the first landing, mid-way: the other two start now
            others.extend(threading.Thread(target=one, args=(i,)) for i in ("T2", "T3"))
            for thread in others:
                thread.start()
            for thread in others:
                thread.join(timeout=0.5)
            # Waiting on the queue's lock (a slow machine could only make this pass wrongly).
            assert all(thread.is_alive() for thread in others)
            assert not outcomes
        return True, "fine"

    one("T1")
    for thread in others:
        thread.join()
    assert sorted(outcomes) == ["T1", "T2", "T3"]
    assert all(isinstance(o, Merged) for o in outcomes.values())
    assert all(_in_history(repo, w) for w in works.values())
    merges = git(repo, "rev-list", "--merges", "--first-parent", REF).split()
    assert len(merges) == 3


def test_landings_from_separate_processes_all_merge(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    works = {i: lane_with(repo, i, {f"{i}.txt": i}) for i in ("T1", "T2", "T3", "T4")}
    code = (
        "import sys; from pathlib import Path; from autopilot_codex.lanes.queue import land; "
        "from autopilot_codex.checks.run import spec; "
        "print(type(land(Path(sys.argv[1]), sys.argv[2], sys.argv[3], "
        "checks=[spec('test -f a.txt')])).__name__)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(repo), RUN, task], stdout=subprocess.PIPE, text=True
        )
        for task in works
    ]
    said = [proc.communicate()[0].strip() for proc in procs]
    assert said == ["Merged"] * 4
    assert all(_in_history(repo, w) for w in works.values())
    assert len(git(repo, "rev-list", "--merges", "--first-parent", REF).split()) == 4


def test_a_branch_moved_outside_the_queue_is_never_built_on_when_the_caller_knows(
    tmp_path: Path,
) -> None:
    """Attack: a lane's implementer writes the integration ref itself (unreviewed work)."""
    repo = begun(tmp_path)
    lane_with(repo, "T1", {"b.txt": "b\n"})
    lane_with(repo, "T2", {"c.txt": "c\n"})
    first = land(repo, RUN, "T1", expected=integration(repo))
    assert isinstance(first, Merged)
    planted = _outside_commit(repo, "planted")
    with pytest.raises(BridgeError, match="outside the queue moved it"):
        land(repo, RUN, "T2", expected=first.sha)
    assert integration(repo) == planted  # nothing built on it, nothing undone either
    start = git(repo, "rev-parse", "main")
    said = worktrees.finish(repo, RUN, "main", start, expected=first.sha)
    assert "not where the merge queue left it" in said and git(repo, "rev-parse", "main") == start
