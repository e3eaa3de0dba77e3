"""Attack first: the lanes driver after a kill -9, and the one budget.

- A driver killed, resumed later: the pid its record names may now be a stranger's (pids are
  reused). Taken as the lane, the driver waits on it (a wedge) and, past the silence timeout,
  kills its process group. The lane had ended with its final record: that record must win.
- `loops --prune` removes a project folder it takes as an ended loop: the folder holding an
  unfinished lanes run's record (`lanes/lanes.json`) is one when nothing else ran there.
- The manager's calls (each landing's review, each follow-up) are charged after the fact:
  with the lanes' reservations spent, a landing still asks, and the run spends past its cap.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from autopilot_codex.commands.loops import prune
from autopilot_codex.errors import BridgeError
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.ask import Asker
from autopilot_codex.lanes.budget import Amount, Budget
from autopilot_codex.lanes.driver import _fresh, _Loop, home_of
from autopilot_codex.lanes.names import component
from autopilot_codex.lanes.record import LanesRun, TaskState, load, save
from tests.conftest import git
from tests.integration.lanes.helpers import RUN, begun, commit_in, integration

INF = math.inf


def still_open(route: str, **kw: Any) -> pytest.MarkDecorator:
    """A route found open in a file of the driver's: the test fails until it is mended."""
    return pytest.mark.xfail(strict=True, reason=f"open: {route}", **kw)


class Asking:
    """The manager as the driver sees it: each review approves and costs `usd`."""

    def __init__(self, usd: float) -> None:
        self.usd, self.cost_usd, self.calls = usd, 0.0, 0

    def review(self, title: str, diff: str) -> tuple[bool, str]:
        self.cost_usd += self.usd
        self.calls += 1
        return True, "fine"


def _run(repo: Path, budget: Budget, **task: Any) -> LanesRun:
    state = TaskState(id="T1", title="t", depends_on=[], contract="Task T1: t", **task)
    return LanesRun(
        run=RUN,
        goal="g",
        implementer="codex",
        manager="openai",
        lanes=1,
        user_branch="main",
        user_sha=git(repo, "rev-parse", "main"),
        budget=budget,
        tasks=[state],
        integration=integration(repo),
    )


def _loop(repo: Path, run: LanesRun, asker: Any) -> _Loop:
    home = home_of(repo)
    save(home, run)
    return _Loop(repo, home, run, cast("Asker", asker), lambda line: None, None)


@pytest.fixture
def stranger() -> Any:
    """A process of someone else's that got a dead lane's pid: a group leader of its own."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    yield proc
    proc.kill()
    proc.wait()


@still_open(
    "lanes/driver.py _Loop.reattach takes a running task's recorded pid as its "
    "lane whenever some process has that pid, before it reads the lane's final record: a pid "
    "reused after a kill -9 gets waited on (a wedge) and, past silent_s, its process group "
    "killed (Lane.stop). Fix: read final.json first (a lane with its record has ended), and "
    "record the lane's start time beside its pid (/proc/<pid>/stat field 22, written by the "
    "preexec) and re-attach only a process whose start time matches.",
)
def test_a_reused_pid_is_never_taken_for_an_ended_lane(tmp_path: Path, stranger: Any) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    commit_in(place, {"T1.txt": "T1\n"})
    held = Amount(1.0, INF, INF)
    run = _run(
        repo,
        Budget(Amount(2.0, INF, INF), reserved={"T1": held}),
        state="running",
        pid=stranger.pid,
        worktree=str(place),
        branch=worktrees.lane_branch(RUN, "T1"),
        attempts=1,
    )
    loop = _loop(repo, run, Asking(0.0))
    folder = home_of(repo) / component(RUN) / component("T1")
    folder.mkdir(parents=True)
    # The lane ended, complete, before the driver came back: its final record says so.
    (folder / "final.json").write_text('{"status": "complete", "cost_usd": 0.5}')
    loop.reattach()
    assert "T1" not in loop.lanes and stranger.poll() is None


def test_control_a_live_lane_is_re_attached(tmp_path: Path, stranger: Any) -> None:
    """Without a final record, a live pid is watched again: the test above can fail."""
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    run = _run(
        repo,
        Budget(Amount(2.0, INF, INF), reserved={"T1": Amount(1.0, INF, INF)}),
        state="running",
        pid=stranger.pid,
        worktree=str(place),
        attempts=1,
    )
    loop = _loop(repo, run, Asking(0.0))
    loop.reattach()
    assert loop.lanes["T1"].pid == stranger.pid


def _aged(folder: Path, seconds: float) -> None:
    then = time.time() - seconds
    for path in (folder, *folder.rglob("*")):
        os.utime(path, (then, then))


def test_prune_never_removes_an_unfinished_lanes_run(tmp_path: Path, isolated: Path) -> None:
    repo = begun(tmp_path)
    home = home_of(repo)
    save(home, _run(repo, Budget(Amount(1.0, INF, INF)), state="running", attempts=1))
    _aged(home.parent, 3 * 3600)
    prune("1h", dry_run=False, home=isolated)
    found = load(home)
    assert found is not None and found.status == "running"


def test_prune_keeps_an_ended_lanes_run_whose_lane_work_is_unmerged(
    tmp_path: Path, isolated: Path
) -> None:
    """A dropped lane's worktree and branch are kept: so is the record that names them."""
    repo = begun(tmp_path)
    home = home_of(repo)
    place = worktrees.add(repo, RUN, "T1")
    commit_in(place, {"T1.txt": "T1\n"})
    run = _run(repo, Budget(Amount(1.0, INF, INF)), state="dropped", worktree=str(place))
    run.status = "incomplete"
    save(home, run)
    _aged(home.parent, 3 * 3600)
    assert prune("1h", dry_run=False, home=isolated).startswith("Nothing to prune")
    assert load(home) is not None


def test_prune_keeps_a_lanes_own_loop_while_its_worktree_is_there(
    tmp_path: Path, isolated: Path
) -> None:
    """A lane's rounds run keeps its state in a project folder of its own (keyed by the lane's
    worktree): `run --resume` in that worktree needs it."""
    from autopilot_codex.rounds.hold import store_for

    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    store = store_for(place)
    store.dir.mkdir(parents=True, exist_ok=True)
    (store.dir / "state.json").write_text(
        json.dumps({"status": "incomplete", "worktree": str(place)})
    )
    _aged(store.dir, 3 * 3600)
    assert prune("1h", dry_run=False, home=isolated).startswith("Nothing to prune")
    assert store.dir.is_dir()


def test_control_prune_removes_an_ended_lanes_run(tmp_path: Path, isolated: Path) -> None:
    repo = begun(tmp_path)
    home = home_of(repo)
    run = _run(repo, Budget(Amount(1.0, INF, INF)), state="merged")
    run.status = "complete"
    save(home, run)
    _aged(home.parent, 3 * 3600)
    assert prune("1h", dry_run=False, home=isolated).startswith("removed")
    assert load(home) is None


def _landing(tmp_path: Path, spent: float, review_usd: float) -> LanesRun:
    repo = begun(tmp_path)
    commit_in(worktrees.add(repo, RUN, "T1"), {"T1.txt": "T1\n"})
    budget = Budget(Amount(1.0, INF, INF), spent=Amount(spent, 0.0, 0.0))
    run = _run(repo, budget, state="landing", attempts=1)
    loop = _loop(repo, run, Asking(review_usd))
    loop._land(run.task("T1"))
    return run


@still_open(
    "lanes/driver.py asks the manager (a landing's review, a refusal's "
    "follow-up) without holding any of the budget for it and charges the call after: with "
    "the budget spent by the lanes, every landing still spends past the cap. Fix: reserve "
    "the manager's next call (e.g. the dearest call so far, or a fixed share set aside at "
    "the plan) before asking, and when it does not fit end the run on its budget with the "
    "lane's branch kept unmerged.",
)
def test_the_managers_calls_never_spend_past_the_cap(tmp_path: Path) -> None:
    run = _landing(tmp_path, spent=1.0, review_usd=0.25)
    assert run.budget.spent.usd <= run.budget.limit.usd


def test_control_a_review_within_the_budget_lands(tmp_path: Path) -> None:
    run = _landing(tmp_path, spent=0.5, review_usd=0.25)
    assert run.task("T1").state == "merged" and run.budget.spent.usd == 0.75


@still_open(
    "lanes/driver.py _fresh names a follow-up `<root>-fix<n>` without looking at "
    "the planned ids: a plan holding `T1-fix1` (the manager reads the repository, which lanes "
    "and injected text shape) gets a second task of that id, which never starts (its id is "
    "taken as started or merged), so the repair of T1 never runs. Fix: skip names in use "
    "(n = 1, 2, ... until `<root>-fix<n>` is no task's id, compared as graph._key does).",
)
def test_a_follow_ups_id_is_no_planned_tasks_id(tmp_path: Path) -> None:
    repo = begun(tmp_path)
    run = _run(repo, Budget(Amount(1.0, INF, INF)))
    run.tasks.append(TaskState(id="T1-fix1", title="t", depends_on=[], contract="c"))
    assert _fresh(run, "T1") not in {t.id for t in run.tasks}


_LANDS_AND_DIES = """
import os, signal, sys
from pathlib import Path
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.driver import _Loop, home_of
from autopilot_codex.lanes.record import load

class Asking:
    cost_usd, calls = 0.0, 0
    def review(self, title, diff):
        return True, "fine"

real = worktrees._move
def dying(repo, ref, new, old, *, delete=False):
    real(repo, ref, new, old, delete=delete)
    if delete and sys.argv[2] == "branch-deleted":
        os.kill(os.getpid(), signal.SIGKILL)
worktrees._move = dying
repo = Path(sys.argv[1])
home = home_of(repo)
run = load(home)
_Loop(repo, home, run, Asking(), lambda line: None, None)._land(run.task("T1"))
"""


@pytest.mark.parametrize(
    "at",
    [
        pytest.param("none", id="control-not-killed"),
        pytest.param(
            "branch-deleted",
            marks=still_open(
                "lanes/driver.py _land removes the merged lane (worktrees.remove "
                "deletes its branch) before it saves the task as merged: killed in between, the "
                "record says `landing`, _landed_before finds no branch, queue.land raises (no "
                "lane branch) and every `run --resume` stops there. Fix: save the task as merged "
                "(and run.integration) before worktrees.remove, and let reattach remove the "
                "worktrees of merged tasks still there.",
                raises=BridgeError,
            ),
        ),
    ],
)
def test_a_driver_killed_while_it_removes_a_merged_lane_resumes(tmp_path: Path, at: str) -> None:
    repo = begun(tmp_path)
    commit_in(worktrees.add(repo, RUN, "T1"), {"T1.txt": "T1\n"})
    run = _run(repo, Budget(Amount(1.0, INF, INF)), state="landing", attempts=1)
    save(home_of(repo), run)
    done = subprocess.run(
        [sys.executable, "-c", _LANDS_AND_DIES, str(repo), at], capture_output=True, check=False
    )
    assert done.returncode == (-signal.SIGKILL if at != "none" else 0), done.stderr
    resumed = load(home_of(repo))
    assert resumed is not None
    loop = _loop(repo, resumed, Asking(0.0))
    loop.reattach()  # the resumed driver
    assert resumed.task("T1").state == "merged"
    assert worktrees.merged(repo, RUN, "T1") or not worktrees.existing(repo, RUN)


class _Started(Exception):
    """The lane's process would start here: the test has seen what it needed."""


@pytest.mark.parametrize(
    "pid_file",
    [
        pytest.param(True, id="control-pid-recorded"),
        pytest.param(
            False,
            id="killed-before-the-lane-wrote-its-pid",
            marks=still_open(
                "lanes/driver.py _refill (reattach, a running task with no pid) removes the "
                "lane's worktree to make it again. A retried lane (a silent one, or one "
                "resumed after a kill -9) whose driver dies between lane.start's unlink of the "
                "pid file and the child's preexec has pid 0 too: its worktree holds the earlier "
                "attempt's uncommitted work and its rounds run's folder, and both are deleted. "
                "Fix: drop _refill; worktrees.attach now fills a worktree in `<place>.part` and "
                "renames it whole, so an existing lane folder is never half made.",
            ),
        ),
    ],
)
def test_a_resumed_lane_keeps_the_work_in_its_worktree(
    tmp_path: Path, pid_file: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.lanes import driver

    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    (place / "unfinished.txt").write_text("an earlier attempt's work, not yet committed\n")
    run = _run(
        repo,
        Budget(Amount(2.0, INF, INF)),
        state="running",
        worktree=str(place),
        branch=worktrees.lane_branch(RUN, "T1"),
        attempts=2,
    )
    loop = _loop(repo, run, Asking(0.0))
    folder = home_of(repo) / component(RUN) / component("T1")
    folder.mkdir(parents=True)
    if pid_file:  # an earlier attempt's pid, long gone
        (folder / "pid").write_text("999999999")

    def started(*args: Any, **kw: Any) -> None:
        raise _Started

    monkeypatch.setattr(driver, "start", started)
    with pytest.raises(_Started):
        loop.reattach()
    assert (place / "unfinished.txt").is_file()
