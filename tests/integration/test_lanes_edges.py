"""`run --lanes`: its refusals, a lane that ends unfinished, a budget that fits no lane, and a
driver interrupted while a lane runs or while one lands (`run --resume` continues both)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from autopilot_codex.commands.run import main
from autopilot_codex.lanes import driver, lane, queue, worktrees
from autopilot_codex.lanes.record import load
from autopilot_codex.rounds.hold import alive
from tests.conftest import git, task, without_sandbox_tools
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_lanes import host as host  # noqa: F401 - the lanes' fake host
from tests.integration.test_lanes import lanes, on_first_call, plan, states


def said(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, out.getvalue() + capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--lanes", "0", "--manager", "openai", "--implementer", "claude"], "--lanes must be 1"),
        (["--lanes", "2", "--implementer", "claude"], "lanes need a manager"),
        (["--lanes", "2", "--manager", "openai"], "choose the implementer"),
        (["--lanes", "2", "--timeout", "0", "--implementer", "claude"], "--timeout 0 is not"),
        (["--lanes", "2", "--resume", "--manager", "openai"], "no unfinished lanes run"),
        (["--lanes", "2", "--rounds", "0", "--implementer", "claude"], "--rounds must be 1"),
        (
            [
                "--lanes",
                "2",
                "--implementer",
                "claude",
                "--manager",
                "openai",
                "--host-arg=--add-dir=/",
            ],
            "would replace or loosen the wall",
        ),
        (["--lanes", "2", "--implementer", "claude", "--manager", "openai"], "could not answer"),
    ],
)
def test_what_a_lanes_run_refuses(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    error: str,
) -> None:
    """Each before any lane starts: the flags, a manager that cannot answer."""
    code, text = said(capsys, "a goal", "--cwd", str(repo), *args)
    assert code == 1 and error in text, text


def test_require_wall_refuses_unwalled_lanes_before_the_plan_is_paid_for(
    repo: Path,
    manager: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without bubblewrap and socat on PATH, Claude Code's sandbox cannot start: no wall.
    without_sandbox_tools(tmp_path, monkeypatch)
    argv = ["a goal", "--cwd", str(repo), "--lanes", "2", "--manager", "openai"]
    code, text = said(capsys, *argv, "--implementer", "claude", "--require-wall")
    assert code == 1 and "--require-wall" in text and "not started" in text, text
    assert manager.requests == [] and load(driver.home_of(repo)) is None


def test_a_manager_that_cannot_work_is_refused_before_anything_starts(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    argv = ["a goal", "--cwd", str(repo), "--lanes", "2", "--manager", "openai"]
    code, text = said(capsys, *argv, "--implementer", "claude")
    assert code == 1 and "OPENAI_API_KEY" in text, text
    assert load(driver.home_of(repo)) is None


def test_status_outside_a_repository_shows_no_lanes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import cli

    monkeypatch.chdir(tmp_path)
    code, text = cli(capsys, "loops")
    assert code == 0 and "Lanes run" not in text


def test_lanes_need_a_branch_and_a_budget_that_fits_a_lane(
    repo: Path, manager: FakeOpenAI, host: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["a goal", "--cwd", str(repo), "--lanes", "2", "--manager", "openai"]
    git(repo, "checkout", "-q", "--detach")
    plan(manager, task(1, depends_on=[]))
    code, text = said(capsys, *argv, "--implementer", "claude")
    assert code == 1 and "HEAD is detached" in text
    git(repo, "checkout", "-q", "main")
    # A budget whose lanes' share cannot fit: nothing starts, the run ends on its budget.
    code, text = said(
        capsys, *argv, "--implementer", "claude", "--budget", "1", "--lane-budget", "5"
    )
    assert code == 2
    assert "T1: pending (task number 1)" in text
    assert "budget: not merged: T1 (the budget left fits no lane)." in text
    # Resumed with a budget that fits the lane's share, it runs on.
    code, record = lanes(repo, "--resume", "--budget", "10")
    assert (code, states(record)) == (0, {"T1": "merged"}), record


def test_a_lane_that_ends_unfinished_is_dropped_with_its_branch_kept(
    repo: Path, manager: FakeOpenAI, host: Path
) -> None:
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
    code, record = lanes(repo, "--lanes", "1", "--max-tokens", "100")
    # One lane at a time: T2 waited for T1, which spent every token the run had (a lane may
    # pass its reservation by its last round): nothing is left to reserve for T2.
    assert (code, record["status"]) == (2, "budget")
    assert states(record) == {"T1": "dropped", "T2": "pending"}
    t1 = record["tasks"][0]
    assert t1["why"].startswith("the lane ended tokens: ")
    assert git(repo, "log", "--format=%s", t1["branch"]).splitlines()[0] == "add T1"


def test_a_review_refusal_past_the_follow_up_limit_stays_refused(
    repo: Path, manager: FakeOpenAI, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(driver, "FOLLOW_UPS", 0)
    manager.enqueue({"summary": "one", "tasks": [task(1, depends_on=[])]}, schema="Plan")
    rejected = {"decision": "reject", "summary": "wrong approach", "findings": []}
    manager.enqueue(rejected | {"revert_files": []}, schema="Review")
    code, record = lanes(repo, "--lanes", "1")
    assert (code, record["status"], states(record)) == (2, "incomplete", {"T1": "refused"})
    assert record["tasks"][0]["why"] == "refused (review): wrong approach"
    assert not manager.requests_for(schema="Task")


def interrupt() -> None:
    raise KeyboardInterrupt


def interrupt_once(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A Ctrl-C at the first wait for the lanes, or before or after the first landing."""
    if where == "wait_any":
        on_first_call(monkeypatch, driver, "wait_any", lane.wait_any, interrupt, after=False)
    else:
        on_first_call(monkeypatch, queue, "land", queue.land, interrupt, after=where != "land")


@pytest.mark.parametrize("where", ["wait_any", "land", "after-land"])
def test_an_interrupted_driver_resumes_a_lane_that_ended_or_a_landing_cut_short(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    where: str,
    tmp_path: Path,
) -> None:
    interrupt_once(monkeypatch, where)
    release = tmp_path / "release"
    if where == "wait_any":
        # Held, the lane cannot end on its own before the interrupt stops it (a loaded
        # machine gave it the time to, and the resume then rightly read its final record).
        monkeypatch.setenv("LANE_HOST_HOLD", f"T1:{release}")
    plan(manager, task(1, depends_on=[]))
    code, record = lanes(repo, "--lanes", "1")
    release.touch()
    assert (code, record["status"]) == (130, "interrupted")
    t1 = record["tasks"][0]
    assert t1["state"] == ("running" if where == "wait_any" else "landing")
    assert not alive(t1["pid"])
    run = load(driver.home_of(repo))
    assert run is not None and run.status == "interrupted"
    # That run is unfinished: a new one is refused until it is resumed.
    code, text = said(
        capsys,
        "a goal",
        "--cwd",
        str(repo),
        "--lanes",
        "1",
        "--manager",
        "openai",
        "--implementer",
        "claude",
    )
    assert code == 1 and "continue it with run --resume" in text
    # Resumed without --manager: the run's own manager is asked.
    code, record = lanes(repo, "--resume", "--lanes", "2", manager=None)
    assert (code, states(record), record["lanes"]) == (0, {"T1": "merged"}, 2), record
    # A lane the interrupt stopped ran again in its worktree; a landing cut short only landed.
    assert record["tasks"][0]["attempts"] == (2 if where == "wait_any" else 1)
    # A landing merged before the interrupt is not merged twice, nor reviewed again.
    assert len(manager.requests_for(schema="Review")) == 1
    assert git(repo, "log", "--format=%s", "main").count("add T1") == 1


def test_a_lane_the_driver_died_starting_goes_on_in_its_worktree(
    repo: Path, manager: FakeOpenAI, host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted between its worktree and its process: the worktree is whole (`add` never
    leaves one half made) and what is in it is the lane's (here work not yet committed); its
    branch's lock may be left."""
    on_first_call(monkeypatch, worktrees, "add", worktrees.add, interrupt, after=True)
    plan(manager, task(1, depends_on=[]))
    code, record = lanes(repo, "--lanes", "1")
    t1 = record["tasks"][0]
    assert (code, t1["state"], t1["pid"]) == (130, "running", 0)
    place = worktrees.lane_path(repo, record["run"], "T1")
    (place / "kept.txt").write_text("an earlier attempt's work\n")
    lock = repo / ".git" / "refs" / "heads" / f"{t1['branch']}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    code, record = lanes(repo, "--resume")
    assert (code, states(record)) == (0, {"T1": "merged"}), record
    assert sorted(git(repo, "ls-files").split()) == ["README.md", "T1.txt", "kept.txt"]
    assert not lock.exists()
