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
from autopilot_codex.commands.run import main
from autopilot_codex.lanes import worktrees
from autopilot_codex.lanes.ask import Asker
from autopilot_codex.lanes.begin import LanesOptions, resumed
from autopilot_codex.lanes.budget import Amount, Budget
from autopilot_codex.lanes.driver import NO_CALL, _fresh, _Loop, home_of
from autopilot_codex.lanes.lane import born
from autopilot_codex.lanes.outcome import end
from autopilot_codex.lanes.record import LanesRun, TaskState, lane_folder, load, save
from tests.conftest import git
from tests.fakes.openai_server import FakeOpenAI
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


def _lane_loop(repo: Path, place: Path, *, held: bool = True, **task: Any) -> _Loop:
    """A resumed driver whose record has T1 running in `place` (its reservation `held`)."""
    reserved = {"T1": Amount(1.0, INF, INF)} if held else {}
    task = {"attempts": 1, **task}
    branch = worktrees.lane_branch(RUN, "T1")
    budget = Budget(Amount(2.0, INF, INF), reserved=reserved)
    run = _run(repo, budget, state="running", worktree=str(place), branch=branch, **task)
    return _loop(repo, run, Asking(0.0))


def _lane_folder(repo: Path) -> Path:
    """Where T1's lane writes its pid and its final record."""
    folder = lane_folder(home_of(repo), RUN, "T1")
    folder.mkdir(parents=True)
    return folder


@pytest.fixture
def stranger() -> Any:
    """A process of someone else's that got a dead lane's pid: a group leader of its own."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    yield proc
    proc.kill()
    proc.wait()


def test_a_reused_pid_is_never_taken_for_an_ended_lane(tmp_path: Path, stranger: Any) -> None:
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    commit_in(place, {"T1.txt": "T1\n"})
    loop = _lane_loop(repo, place, pid=stranger.pid)
    folder = _lane_folder(repo)
    # The lane ended, complete, before the driver came back: its final record says so.
    (folder / "final.json").write_text('{"status": "complete", "cost_usd": 0.5}')
    loop.reattach()
    assert "T1" not in loop.lanes and stranger.poll() is None


@pytest.mark.parametrize("known", [True, False], ids=["its-start-time-matches", "start-unknown"])
def test_control_a_live_lane_is_re_attached(tmp_path: Path, stranger: Any, known: bool) -> None:
    """Without a final record, a live pid that started when the lane did (or whose start is
    not known) is watched again: the tests around it can fail."""
    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    start = born(stranger.pid) if known else 0
    loop = _lane_loop(repo, place, pid=stranger.pid, pid_start=start)
    loop.reattach()
    assert loop.lanes["T1"].pid == stranger.pid
    assert loop.lanes["T1"].proc.poll() is None  # watched while it runs


def test_a_reused_pid_is_never_taken_for_a_lane_that_left_no_record(
    tmp_path: Path, stranger: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lane died with the driver (no final record); its pid now names a process started
    later: that one is left alone, and the lane resumes in its worktree."""
    from autopilot_codex.lanes import driver

    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    loop = _lane_loop(repo, place, pid=stranger.pid, pid_start=born(stranger.pid) - 1)
    resumed: list[str] = []

    def starting(spec: Any, *rest: Any) -> None:
        resumed.append(spec.task_id)
        raise _Started

    monkeypatch.setattr(driver, "start", starting)
    with pytest.raises(_Started):
        loop.reattach()
    assert resumed == ["T1"] and "T1" not in loop.lanes and stranger.poll() is None


class _Started(Exception):
    """The lane's process would start here: the test has seen what it needed."""


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
    # The worst case of one call, as `begin.worst_usd` prices it: here what a review costs.
    run.call_usd = review_usd
    loop = _loop(repo, run, Asking(review_usd))
    loop._land(run.task("T1"))
    return run


def test_the_managers_calls_never_spend_past_the_cap(tmp_path: Path) -> None:
    run = _landing(tmp_path, spent=1.0, review_usd=0.25)
    assert run.budget.spent.usd <= run.budget.limit.usd
    repo = tmp_path / "repo"
    # The lane waits in the queue, its branch unmerged, and the run says why it ends.
    assert run.task("T1").state == "landing" and not worktrees.merged(repo, RUN, "T1")
    assert run.starved == NO_CALL and run.budget.asking == Amount()


def test_a_run_whose_manager_cannot_be_paid_starts_no_lane_and_says_why(tmp_path: Path) -> None:
    """Resumed with a landing whose calls do not fit: the lane waits in the queue, no ready
    task starts (its lane could never land), and the run ends on its budget, saying so."""
    repo = begun(tmp_path)
    commit_in(worktrees.add(repo, RUN, "T1"), {"T1.txt": "T1\n"})
    run = _run(repo, Budget(Amount(1.0, INF, INF), spent=Amount(0.8, 0.0, 0.0)), state="landing")
    run.tasks.append(TaskState(id="T2", title="t", depends_on=[], contract="Task T2: t"))
    run.tasks[1].spec = {"id": "T2", "title": "t", "depends_on": []}
    run.queue, run.call_usd = ["T1"], 0.25
    loop = _loop(repo, run, Asking(0.25))
    loop.reattach()
    loop.go()
    assert [t.state for t in run.tasks] == ["landing", "pending"] and run.queue == ["T1"]
    end(repo, run)
    assert (run.status, run.why) == ("budget", f"not merged: T1, T2 ({NO_CALL})")


def test_a_landing_that_waited_on_the_budget_lands_once_a_lane_gives_some_back(
    tmp_path: Path,
) -> None:
    repo = begun(tmp_path)
    for tid in ("T1", "T2"):
        commit_in(worktrees.add(repo, RUN, tid), {f"{tid}.txt": f"{tid}\n"})
    budget = Budget(Amount(1.0, INF, INF), reserved={"T2": Amount(0.8, INF, INF)})
    run = _run(repo, budget, state="landing", attempts=1)
    run.tasks.append(TaskState(id="T2", title="t", depends_on=[], contract="c", attempts=1))
    run.tasks[1].state, run.queue, run.call_usd = "running", ["T1"], 0.25
    loop = _loop(repo, run, Asking(0.25))
    loop._land(run.task("T1"))
    assert run.task("T1").state == "landing" and run.starved == NO_CALL
    # T2's lane ends having spent little of what it held: T1 lands first, then T2.
    loop._ended(run.task("T2"), {"status": "complete", "cost_usd": 0.05})
    assert [t.state for t in run.tasks] == ["merged", "merged"] and run.queue == []
    assert (run.starved, round(run.budget.spent.usd, 6)) == ("", 0.55)


def test_control_a_review_within_the_budget_lands(tmp_path: Path) -> None:
    run = _landing(tmp_path, spent=0.5, review_usd=0.25)
    assert run.task("T1").state == "merged" and run.budget.spent.usd == 0.75


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
        pytest.param("branch-deleted", id="killed-between-branch-deletion-and-save"),
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


@pytest.mark.parametrize(
    "pid_file",
    [
        pytest.param(True, id="control-pid-recorded"),
        pytest.param(False, id="killed-before-the-lane-wrote-its-pid"),
    ],
)
def test_a_resumed_lane_keeps_the_work_in_its_worktree(
    tmp_path: Path, pid_file: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.lanes import driver

    repo = begun(tmp_path)
    place = worktrees.add(repo, RUN, "T1")
    (place / "unfinished.txt").write_text("an earlier attempt's work, not yet committed\n")
    loop = _lane_loop(repo, place, held=False, attempts=2)
    folder = _lane_folder(repo)
    if pid_file:  # an earlier attempt's pid, long gone
        (folder / "pid").write_text("999999999")

    def started(*args: Any, **kw: Any) -> None:
        raise _Started

    monkeypatch.setattr(driver, "start", started)
    with pytest.raises(_Started):
        loop.reattach()
    assert (place / "unfinished.txt").is_file()


def test_a_driver_killed_during_a_manager_call_is_charged_all_it_held(tmp_path: Path) -> None:
    """The call's cost never reached the record: resumed, the run counts its worst case."""
    repo = begun(tmp_path)
    run = _run(repo, Budget(Amount(1.0, INF, INF), asking=Amount(0.5, 0.0, 0.0)))
    save(home_of(repo), run)
    again = resumed(home_of(repo), LanesOptions(worktree=repo, resume=True))
    assert (again.budget.spent, again.budget.asking) == (Amount(0.5, 0.0, 0.0), Amount())


def test_a_plan_whose_worst_case_passes_the_budget_is_never_asked(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["a goal", "--cwd", str(repo), "--lanes", "1", "--manager", "openai"]
    argv += ["--implementer", "claude"]
    # A plan no lane could run, so the control below stops right after the manager's answer.
    manager.enqueue({"summary": "none", "tasks": []}, schema="Plan")
    assert main([*argv, "--budget", "0.01"]) == 1
    assert "cannot cover even the plan" in capsys.readouterr().err
    assert manager.requests == [] and load(home_of(repo)) is None
    # Control: a budget the plan's worst case fits is asked.
    assert main([*argv, "--budget", "100"]) == 1
    assert "cannot cover" not in capsys.readouterr().err and manager.requests
