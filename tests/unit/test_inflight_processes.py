"""Whether the holder of a slot or a reservation is still there, read from real processes:
a pid that was never one, a process of another user, a zombie, a pid reused by a later one."""

from __future__ import annotations

import os
import subprocess
import sys

from autopilot_codex.state import Reservation
from autopilot_codex.styles.autopilot.inflight import (
    pid_alive,
    process_start,
    reservation_stale,
    reserve,
    supersede,
)
from tests.unit.test_reducer import make_state


def test_no_pid_is_never_alive_and_init_is_alive_whoever_owns_it() -> None:
    assert not pid_alive(0) and not pid_alive(-5)
    assert pid_alive(1)  # as root, kill(1, 0) succeeds; as a user, it is refused: alive
    assert pid_alive(os.getpid())


def test_an_exited_child_not_yet_reaped_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    try:
        assert not pid_alive(child.pid)
    finally:
        child.wait()
    assert not pid_alive(child.pid) and process_start(child.pid) == ""


def test_a_reservation_is_stale_past_its_deadline_or_under_a_reused_pid() -> None:
    start = process_start(os.getpid())
    mine = Reservation(token="t", pid=os.getpid(), usd=1.0, deadline=100.0, start=start)
    assert not reservation_stale(mine, now=50.0)
    assert reservation_stale(mine, now=150.0)
    reused = Reservation(token="t", pid=os.getpid(), usd=1.0, deadline=100.0, start="1")
    assert reservation_stale(reused, now=50.0)


def test_without_a_slot_there_is_nothing_to_reserve_or_supersede() -> None:
    empty = make_state()
    assert empty.inflight is None
    assert reserve(empty, "token", 1.0) == empty
    assert supersede(empty) == (empty, None)
