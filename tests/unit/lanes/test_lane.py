"""A lane's command line, its final record and its spend, and the run's record on disk."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from autopilot_codex.lanes.budget import Amount, Budget, cap
from autopilot_codex.lanes.lane import (
    LaneSpec,
    Orphan,
    born,
    command,
    final,
    recorded_pid,
    running,
    used,
)
from autopilot_codex.lanes.record import LanesRun, TaskState, load, path, save

UNCAPPED = Amount(math.inf, math.inf, math.inf)


def spec(reservation: Amount = UNCAPPED, *, resume: bool = False) -> LaneSpec:
    return LaneSpec(
        "T1", Path("/lane"), "codex", "-x: a goal", reservation, 30, ("make test",), resume
    )


def test_a_lane_runs_the_rounds_driver_held_to_its_reservation_without_a_manager() -> None:
    argv = command(spec(Amount(0.5, 1000.4, 59.9)))
    assert argv[:5] == [sys.executable, "-I", "-m", "autopilot_codex", "run"]
    assert argv[5:] == [
        "--cwd", "/lane", "--json", "--budget", "0.500000", "--max-tokens", "1000",
        "--max-duration", "59", "--timeout", "30", "--implementer", "codex", "--manager", "none",
        "--check", "make test", "--", "-x: a goal",
    ]  # fmt: skip


def test_a_meter_without_a_cap_is_no_flag_and_a_resumed_lane_keeps_its_goal() -> None:
    argv = command(spec(resume=True))
    assert argv[5:] == ["--cwd", "/lane", "--json", "--timeout", "30", "--resume"]


def test_a_lane_gets_the_runs_rounds_host_flags_and_wall_demand() -> None:
    given = replace(spec(), rounds=4, host_args=("--model=x", "-v"), require_wall=True)
    argv = command(given)
    assert argv[5:11] == [
        "--cwd", "/lane", "--json", "--host-arg=--model=x", "--host-arg=-v", "--require-wall",
    ]  # fmt: skip
    assert argv[-6:] == ["--rounds", "4", "--check", "make test", "--", "-x: a goal"]
    # A resumed lane keeps its own round limit but is held to the same flags and wall.
    again = command(replace(given, resume=True))
    assert "--rounds" not in again and again[-1] == "--resume"
    assert again[5:11] == argv[5:11]


def test_a_lane_without_a_final_record_counts_all_it_held(tmp_path: Path) -> None:
    out = tmp_path / "final.json"
    assert final(out) is None
    out.write_text("[1]")
    assert final(out) is None
    out.write_text("not json")
    assert final(out) is None
    out.write_text('{"cost_usd": 0.25, "tokens": 10, "duration_s": 3.5}')
    record = final(out)
    assert used(record, Amount(1, 100, 60)) == Amount(0.25, 10, 3.5)
    assert used(None, Amount(1, math.inf, 60)) == Amount(1, 0, 60)
    assert used({}, Amount(1, 1, 1)) == Amount(0, 0, 0)


def test_the_pid_a_lane_wrote_is_read_back_with_its_start_time(tmp_path: Path) -> None:
    assert recorded_pid(tmp_path) == (0, 0)
    (tmp_path / "pid").write_text("123")  # no start time: not a lane's record
    assert recorded_pid(tmp_path) == (0, 0)
    (tmp_path / "pid").write_text("123 456")
    assert recorded_pid(tmp_path) == (123, 456)


def test_a_process_start_time_is_its_own_and_none_once_it_is_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    start = born(proc.pid)
    assert start > 0 and start >= born(os.getpid())
    proc.wait()
    assert born(proc.pid) == 0 and not running(proc.pid, start)


@pytest.mark.parametrize("matching", [True, False])
def test_an_orphan_lane_is_watched_by_its_pid_and_start_time(matching: bool) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    orphan = Orphan(proc.pid, born(proc.pid) + (0 if matching else 1))
    if not matching:  # a stranger with the lane's pid: the lane has ended
        assert (orphan.poll(), orphan.wait()) == (0, 0)
        orphan = Orphan(proc.pid)
    assert orphan.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        orphan.wait(0.0)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait()
    assert (orphan.poll(), orphan.wait()) == (0, 0)


def test_the_run_record_reads_back_and_a_damaged_one_is_none(tmp_path: Path) -> None:
    assert load(tmp_path) is None
    run = LanesRun("r", "goal", "claude", "openai", 2, "main", "abc", Budget(cap(2.0, 0, 0)))
    run.tasks.append(TaskState("T1", "one", [], "Task T1: one"))
    save(tmp_path, run)
    assert load(tmp_path) == run
    assert run.ids("pending") == ["T1"]
    for edited in ('{"run": 1}', '"a string"', "7", "[]"):
        path(tmp_path).write_text(edited)
        assert load(tmp_path) is None, edited


def test_a_resume_may_ask_for_the_wall_or_give_the_host_flags_again_never_drop_them(
    tmp_path: Path,
) -> None:
    from autopilot_codex.lanes.begin import LanesOptions, resumed

    run = LanesRun("r", "goal", "claude", "openai", 2, "main", "abc", Budget(cap(2.0, 0, 0)))
    run.status, run.host_args, run.require_wall = "interrupted", ["-v"], True
    save(tmp_path, run)
    plain = resumed(tmp_path, LanesOptions(worktree=tmp_path, resume=True))
    assert (plain.host_args, plain.require_wall) == (["-v"], True)
    save(tmp_path, replace(run, require_wall=False))
    given = LanesOptions(worktree=tmp_path, resume=True, host_args=("-x",), require_wall=True)
    again = resumed(tmp_path, given)
    assert (again.host_args, again.require_wall) == (["-x"], True)


def test_a_lane_deaf_to_the_interrupt_is_killed_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autopilot_codex.lanes import lane as lanes

    monkeypatch.setattr(lanes, "STOP_GRACE_S", 0.2)
    deaf = "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); print(1, flush=True); sys.stdin.read()"
    proc = subprocess.Popen(
        [sys.executable, "-c", deaf],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
    lane = lanes.Lane(spec(), proc, tmp_path / "final.json", tmp_path / "none.log", 0.0, 0.0)
    # No log yet: silent since it started.
    assert lane.silent_for(5.0) == 5.0
    lane.stop()
    assert proc.returncode == -9
    for stream in (proc.stdin, proc.stdout):
        assert stream is not None
        stream.close()
