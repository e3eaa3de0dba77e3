"""`run --lanes N` end to end: real git repositories, real lane processes (the rounds driver
with a fake host that is stateless per worktree), the fake OpenAI server as the manager."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands.run import main
from autopilot_codex.lanes.driver import home_of
from autopilot_codex.lanes.record import load
from autopilot_codex.lanes.view import lines as view_lines
from autopilot_codex.rounds.hold import alive
from tests.conftest import ROOT, cli, git, review_body, task
from tests.fakes.openai_server import FakeOpenAI

LANE_HOST = ROOT / "tests" / "fakes" / "lane_host.py"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The lanes' implementer: the stateless fake host; its log of start and end times."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(LANE_HOST))}"
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", command)
    monkeypatch.setenv("AUTOPILOT_CODEX_CODEX_CMD", command)
    log = tmp_path / "lanes.log"
    monkeypatch.setenv("LANE_HOST_LOG", str(log))
    return log


def barrier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    folder = tmp_path / "barrier"
    folder.mkdir()
    monkeypatch.setenv("LANE_HOST_BARRIER", f"{folder}:{n}")


def plan(manager: FakeOpenAI, *tasks: dict[str, Any]) -> None:
    manager.enqueue({"summary": "lanes", "tasks": list(tasks)}, schema="Plan")
    for _ in tasks:
        manager.enqueue(review_body("approve"), schema="Review")


def lanes(repo: Path, *args: str, manager: str | None = "openai") -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    argv = ["--cwd", str(repo), "--json", *(["--manager", manager] if manager else []), *args]
    if "--resume" not in args:
        argv = ["write the task files", "--implementer", "claude", *argv]
    code = main(argv, stdout=out)
    return code, json.loads(out.getvalue())


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def spans(log: Path, *, first: bool = False) -> dict[str, tuple[float, float]]:
    """Each task's host calls (or only its first): from the first start to the last end."""
    found: dict[str, list[float]] = {}
    for event in events(log):
        times = found.setdefault(event["task"], [])
        if not (first and len(times) == 2):
            times.append(event["t"])
    return {k: (min(v), max(v)) for k, v in found.items()}


def states(record: dict[str, Any]) -> dict[str, str]:
    return {t["id"]: t["state"] for t in record["tasks"]}


def test_three_independent_tasks_run_at_once_and_all_merge(
    repo: Path, manager: FakeOpenAI, host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    barrier(tmp_path, monkeypatch, 3)
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]), task(3, depends_on=[]))
    code, record = lanes(repo, "--lanes", "3")
    assert (code, record["status"]) == (0, "complete"), record
    assert states(record) == {"T1": "merged", "T2": "merged", "T3": "merged"}
    # Every lane was running while every other was: the latest start precedes the first end.
    tasks = record["tasks"]
    assert max(t["started"] for t in tasks) < min(t["ended"] for t in tasks)
    # So were their implementers (each lane's first host call, as the host recorded it).
    firsts = spans(host, first=True).values()
    assert max(start for start, _ in firsts) < min(end for _, end in firsts)
    # The user's branch fast-forwarded to the integration branch, which holds all three.
    assert sorted(git(repo, "ls-files").split()) == ["README.md", "T1.txt", "T2.txt", "T3.txt"]
    assert "now has the run's work" in record["finish"]
    # One plan and one review per task: the manager's requests grow with tasks, not rounds.
    assert record["manager_calls"] == 4
    assert len(manager.requests) == 4


def test_a_dependent_task_starts_only_after_its_dependency_merged(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan(manager, task(1, depends_on=[]), task(2, depends_on=["T1"]))
    code, record = lanes(repo, "--lanes", "2", "--rounds", "3")
    assert (code, states(record)) == (0, {"T1": "merged", "T2": "merged"}), record
    # Each lane's rounds run was given the run's round limit.
    assert all(any("of at most 3." in a for a in e["argv"]) for e in events(host)), events(host)
    # T2's lane began from the integration head holding T1's merged work.
    first_t2 = next(e for e in events(host) if e["task"] == "T2")
    assert first_t2["files"] == ["T1.txt"]
    t1, t2 = (record["tasks"][n] for n in (0, 1))
    assert t2["started"] > t1["ended"]
    # `status` and `loops` show each lane and the queue.
    monkeypatch.chdir(repo)
    for verb in ("status", "loops"):
        code, text = cli(capsys, verb)
        assert f"Lanes run {record['run']}: complete, 2 at most, spent $" in text, text
        assert "  queue: empty" in text
        assert [line.split()[:2] for line in text.splitlines() if line.startswith("  T")] == [
            ["T1", "merged"],
            ["T2", "merged"],
        ]


def test_a_budget_that_fits_two_lanes_never_starts_a_third(
    repo: Path, manager: FakeOpenAI, host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    barrier(tmp_path, monkeypatch, 2)
    plan(manager, *(task(n, depends_on=[]) for n in (1, 2, 3)))
    code, record = lanes(repo, "--lanes", "3", "--budget", "1", "--lane-budget", "0.45")
    assert (code, record["status"]) == (0, "complete"), record
    t1, t2, t3 = record["tasks"]
    # The third lane's reservation fitted only once a lane had ended and given back the rest.
    assert t3["started"] >= min(t1["ended"], t2["ended"])
    assert record["spent"]["usd"] <= 1.0


def wait_for(what: Callable[[], bool], proc: subprocess.Popen[bytes], said: Path) -> None:
    """Until `what` holds; a driver that ended first fails the test (nothing is timed)."""
    while not what():
        assert proc.poll() is None, said.read_text()
        time.sleep(0.05)


def merged(repo: Path, task_id: str) -> bool:
    run = load(home_of(repo))
    return run is not None and run.task(task_id).state == "merged"


def on_first_call(
    monkeypatch: pytest.MonkeyPatch,
    owner: object,
    name: str,
    real: Callable[..., Any],
    then: Callable[[], None],
    *,
    after: bool,
) -> None:
    """`owner.name` runs `then` at its first call, before `real` (which a raise there skips)
    or after it; later calls are `real`'s alone."""
    calls: list[int] = []

    def patched(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1 and not after:
            then()
        found = real(*args, **kwargs)
        if len(calls) == 1 and after:
            then()
        return found

    monkeypatch.setattr(owner, name, patched)


def release_once_attached(monkeypatch: pytest.MonkeyPatch, release: Path) -> None:
    """The held lane goes on only once the resumed driver watches it again."""
    from autopilot_codex.lanes import driver, lane

    on_first_call(monkeypatch, driver, "attach", lane.attach, release.touch, after=True)


@pytest.mark.parametrize("lane", ["lives", "ended", "killed-too"])
def test_kill_9_of_the_driver_and_resume_lose_no_commit_and_rerun_no_merged_task(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lane: str,
) -> None:
    """The driver dies mid-run; its lanes are their own process groups and live on (re-attached
    on resume, or ended meanwhile: their final record is read), or die too (a lane with a
    branch and no process resumes in its worktree)."""
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T2:{release}")
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]), task(3, depends_on=["T1"]))
    argv = ["write the task files", "--implementer", "claude", "--manager", "openai"]
    said = tmp_path / "driver.err"
    with said.open("wb") as err:
        driver = subprocess.Popen(
            [sys.executable, "-m", "autopilot_codex", "run", *argv, "--lanes", "2"]
            + ["--cwd", str(repo)],
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    record = home_of(repo) / "lanes.json"
    try:
        # T1 merged while T2's implementer is held mid-round: the driver dies there.
        wait_for(lambda: merged(repo, "T1"), driver, said)
        wait_for(Path(f"{release}.held").exists, driver, said)
        driver.kill()
        driver.wait()
        assert json.loads(record.read_text())["status"] == "running"
        # `status` shows the held lane running in its first round, T1 merged.
        shown = view_lines(repo)
        assert any(line.split()[:4] == ["T2", "running", "round", "1"] for line in shown), shown
        assert any(line.split()[:4] == ["T1", "merged", "round", "2"] for line in shown), shown
        t2 = json.loads(record.read_text())["tasks"][1]
        if lane == "killed-too":
            os.killpg(t2["pid"], signal.SIGKILL)
            # Its implementer (a session of its own) dies with it: never two in one tree.
            implementer = int(Path(f"{release}.held").read_text())
            deadline = time.monotonic() + 60
            while alive(implementer):
                assert time.monotonic() < deadline, "the lane's implementer outlived it"
                time.sleep(0.05)
            release.touch()
        if lane == "ended":
            release.touch()
            while alive(t2["pid"]):
                time.sleep(0.05)
        if lane == "lives":
            release_once_attached(monkeypatch, release)
        code, result = lanes(repo, "--resume")
    finally:
        release.touch()
    assert (code, states(result)) == (0, {"T1": "merged", "T2": "merged", "T3": "merged"}), result
    # A lane killed with the driver started again (`run --resume` in its worktree); one that
    # lived on was watched to its end.
    assert next(t for t in result["tasks"] if t["id"] == "T2")["attempts"] == 1 + (
        lane == "killed-too"
    )
    # No merged task ran again: T1's implementer was called twice (its work, its verifier).
    assert [e["event"] for e in events(host) if e["task"] == "T1"] == ["start", "end"] * 2
    # No commit lost: each task's one commit is on the user's branch.
    log = git(repo, "log", "--format=%s", "main").splitlines()
    assert sorted(s for s in log if s.startswith("add ")) == ["add T1", "add T2", "add T3"]
    # Nor one deleted: a lane the driver died starting was made again, not committed half made.
    assert sorted(git(repo, "ls-files").split()) == ["README.md", "T1.txt", "T2.txt", "T3.txt"]


FOLLOW_UP = task(9, depends_on=[]) | {"title": "redo the work on the merged head"}


@pytest.mark.parametrize("refusal", ["conflict", "checks"])
def test_a_refused_landing_becomes_a_manager_made_follow_up_never_a_forced_merge(
    repo: Path,
    manager: FakeOpenAI,
    host: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    refusal: str,
) -> None:
    """Two lanes edit the same lines (conflict), or each passes the checks alone and the merged
    tree fails them (checks): the second landing is refused and the manager writes a task on
    the merged head, which lands."""
    barrier(tmp_path, monkeypatch, 2)
    args = ["--lanes", "2"]
    if refusal == "conflict":
        monkeypatch.setenv("LANE_HOST_FILE", "shared.txt")
    else:
        args += ["--check", "sh -c '! { test -e T1.txt && test -e T2.txt; }'"]
    plan(manager, task(1, depends_on=[]), task(2, depends_on=[]))
    manager.enqueue(FOLLOW_UP, schema="Task")
    code, record = lanes(repo, *args)
    assert code == 0, record
    # Either lane may land first; the other is refused.
    first, second, fix = sorted(
        record["tasks"], key=lambda t: ("merged", "refused").index(t["state"]) + bool(t["follows"])
    )
    assert (first["state"], second["state"], fix["state"]) == ("merged", "refused", "merged")
    assert second["why"].startswith(f"refused ({refusal})")
    assert (fix["follows"], fix["title"]) == (second["id"], "redo the work on the merged head")
    # The follow-up was asked with the refused lane's diff as its context.
    asked = manager.requests_for(schema="Task")[0].prompt_text
    assert f"Refused for: {refusal}" in asked and f"+{second['id']}" in asked
    # Nothing forced: the refused lane's branch is kept, its commit never on the user's branch.
    assert git(repo, "rev-parse", "--verify", second["branch"])
    assert git(repo, "branch", "--contains", second["branch"], "--list", "main") == ""


def test_a_lane_silent_past_its_timeout_is_stopped_retried_once_then_dropped(
    repo: Path, manager: FakeOpenAI, host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = tmp_path / "release"
    monkeypatch.setenv("LANE_HOST_HOLD", f"T1:{release}")
    plan(manager, task(1, depends_on=[]), task(2, depends_on=["T1"]))
    try:
        code, record = lanes(repo, "--lanes", "1", "--lane-timeout", "1")
        # The stopped lane's round ended its host too (before anything released it).
        assert not alive(int(Path(f"{release}.held").read_text()))
    finally:
        release.touch()
    assert (code, record["status"]) == (2, "incomplete"), record
    t1, t2 = record["tasks"]
    assert (t1["state"], t1["attempts"], t2["state"]) == ("dropped", 2, "pending")
    assert t1["why"] == "silent past its timeout; its branch is kept"
    assert record["why"] == "not merged: T1, T2"
    # Its branch is there to be resumed.
    assert git(repo, "rev-parse", "--verify", t1["branch"])


def test_a_lane_that_committed_nothing_is_never_taken_as_merged_unseen(
    repo: Path, manager: FakeOpenAI, host: Path
) -> None:
    """T1's file is already in the repository as the lane would write it: the lane changes
    nothing and says it is done. Its task is refused as empty, and the manager is asked what
    should happen, never merged without a look."""
    (repo / "T1.txt").write_text("T1\n")
    git(repo, "add", "T1.txt")
    git(repo, "commit", "-qm", "T1 already there")
    plan(manager, task(1, depends_on=[]))
    manager.enqueue(FOLLOW_UP, schema="Task")
    manager.enqueue(review_body("approve"), schema="Review")
    code, record = lanes(repo, "--lanes", "1")
    assert code == 0, record
    t1, fix = record["tasks"]
    assert (t1["state"], fix["state"], fix["follows"]) == ("refused", "merged", "T1"), record
    assert t1["why"] == "refused (empty): the lane committed nothing, so there is nothing to land"
    asked = manager.requests_for(schema="Task")[0].prompt_text
    assert "Refused for: empty" in asked
