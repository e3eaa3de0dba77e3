"""One lane: the existing rounds driver (`run`) as a subprocess in the lane's worktree.

A lane is its own process group, so stopping it stops its rounds' host processes too. It runs
without a manager (`--manager none`): the lanes driver's manager plans, reviews each landing and
writes follow-ups, so the manager's requests grow with the tasks, not with lanes × rounds. Its
final record is the JSON `run --json` prints; its progress lines (the rounds' view) go to a log
whose growth is the lane's heartbeat.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from .. import surrogates
from ..rounds.hold import alive, stat_fields
from .budget import Amount
from .record import FINAL, LOG

PID_NAME = "pid"
# Set when the user interrupts a driver whose loop runs on another thread (a durable run's):
# its wait for the lanes ends as a Ctrl-C on its own thread would.
interrupted = threading.Event()
# Seconds a stopped lane has to end its round before its group is killed.
STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class LaneSpec:
    task_id: str
    worktree: Path
    implementer: str
    contract: str
    reservation: Amount
    round_timeout_s: float = 3600.0
    checks: tuple[str, ...] = ()
    resume: bool = False
    rounds: int = 0
    host_args: tuple[str, ...] = ()
    require_wall: bool = False


def command(spec: LaneSpec) -> list[str]:
    """The lane's argv: `run` held to its reservation (a resumed lane keeps its own goal)."""
    r = spec.reservation
    # Isolated (`-I`) as every Python the bridge starts: no PYTHON* variable, user site or
    # current folder decides what the lane imports.
    argv = [sys.executable, "-I", "-m", "autopilot_codex", "run", "--cwd", str(spec.worktree)]
    argv += ["--json", *(f"--host-arg={a}" for a in spec.host_args)]
    if spec.require_wall:
        argv.append("--require-wall")
    if not math.isinf(r.usd):
        argv += ["--budget", f"{r.usd:.6f}"]
    if not math.isinf(r.tokens):
        argv += ["--max-tokens", str(max(1, int(r.tokens)))]
    if not math.isinf(r.seconds):
        argv += ["--max-duration", str(max(1, int(r.seconds)))]
    argv += ["--timeout", f"{spec.round_timeout_s:g}"]
    if spec.resume:
        return [*argv, "--resume"]
    argv += ["--implementer", spec.implementer, "--manager", "none"]
    if spec.rounds:
        argv += ["--rounds", str(spec.rounds)]
    argv += [arg for check in spec.checks for arg in ("--check", check)]
    return [*argv, "--", spec.contract]


class Process(Protocol):
    @property
    def pid(self) -> int: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


def born(pid: int) -> int:
    """When the process started, in clock ticks after boot (`/proc/<pid>/stat` field 22); 0
    where that cannot be read (the process is gone, or no /proc)."""
    fields = stat_fields(pid)
    return 0 if fields is None else int(fields[19])


def running(pid: int, start: int) -> bool:
    """Whether the lane `pid` is still running: a pid is reused once its process ended, so a
    live one is the lane's only when it started when the lane did (a start not known, as where
    no /proc tells it, leaves the pid alone to say)."""
    return alive(pid) and (not start or born(pid) == start)


@dataclass(frozen=True)
class Orphan:
    """A lane process a killed driver left running: not our child, watched by its pid and its
    start time."""

    pid: int
    start: int = 0

    def poll(self) -> int | None:
        return None if running(self.pid, self.start) else 0

    def wait(self, timeout: float | None = None) -> int:
        give_up = None if timeout is None else time.monotonic() + timeout
        while running(self.pid, self.start):
            if give_up is not None and time.monotonic() > give_up:
                raise subprocess.TimeoutExpired("lane", timeout or 0.0)
            time.sleep(0.05)
        return 0


@dataclass
class Lane:
    """A running lane: its process, where its output goes, when it last said something."""

    spec: LaneSpec
    proc: Process
    out: Path
    log: Path
    started: float
    heard: float
    # The process's start time (`born`), recorded beside its pid to tell it from a later one.
    start: int = 0
    size: int = 0
    files: list[IO[bytes]] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def silent_for(self, now: float) -> float:
        """Seconds since the lane's log last grew (its rounds' view writes a line per event)."""
        with contextlib.suppress(OSError):
            size = self.log.stat().st_size
            if size != self.size:
                self.size, self.heard = size, now
        return now - self.heard

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None:
            for f in self.files:
                f.close()
        return code

    def stop(self) -> None:
        """Stop the lane's process group; its branch stays. An interrupt first, so its rounds
        driver ends its round's host (a session of its own) and records the run as
        interrupted; what is left after a grace period is killed."""
        for sig in (signal.SIGINT, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(STOP_GRACE_S)
                break
        self.proc.wait()
        self.poll()


def start(spec: LaneSpec, folder: Path, env: Mapping[str, str] | None = None) -> Lane:
    """Start the lane in a new session (its own process group), output to `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PID_NAME).unlink(missing_ok=True)
    out, log = folder / FINAL, folder / LOG
    stdout, stderr = out.open("wb"), log.open("ab")
    proc = subprocess.Popen(
        command(spec),
        # Not the worktree: `python -m` puts its cwd first on sys.path, and the worktree's files
        # (its implementer's) would be imported as the bridge, unwalled. `--cwd` names it.
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        env=dict(os.environ if env is None else env),
        start_new_session=True,
        # The child writes its own pid and start time before it runs anything: a driver
        # killed before it recorded them still leaves the lane findable by `run --resume`.
        preexec_fn=lambda: (folder / PID_NAME).write_text(f"{os.getpid()} {born(os.getpid())}"),
    )
    now = time.time()
    return Lane(spec, proc, out, log, now, now, born(proc.pid), files=[stdout, stderr])


def recorded_pid(folder: Path) -> tuple[int, int]:
    """The pid and start time a lane wrote at its start ((0, 0): it never got that far)."""
    try:
        pid, start = (folder / PID_NAME).read_text().split()
        return int(pid), int(start)
    except (OSError, ValueError):
        return 0, 0


def final(out: Path) -> dict[str, Any] | None:
    """The lane's final record, or None when it left none (killed, crashed)."""
    try:
        raw = surrogates.loads(out.read_text())
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def used(record: dict[str, Any] | None, held: Amount) -> Amount:
    """What a lane spent: its record's meters, or (no record) all it held, so the budget can
    never count a lane that vanished as cheaper than it may have been."""
    if record is None:
        # A meter without a cap needs no guard: count nothing there.
        return Amount(*(0.0 if math.isinf(v) else v for v in held.values()))
    return Amount(
        float(record.get("cost_usd") or 0.0),
        float(record.get("tokens") or 0),
        float(record.get("duration_s") or 0.0),
    )


def attach(spec: LaneSpec, pid: int, start: int, folder: Path) -> Lane:
    """Watch a lane a killed driver left running; its output files are where it left them."""
    now = time.time()
    return Lane(spec, Orphan(pid, start), folder / FINAL, folder / LOG, now, now, start)


def wait_any(lanes: Sequence[Lane], poll_s: float = 0.05) -> None:
    """Sleep a beat unless a lane already ended."""
    if all(lane.proc.poll() is None for lane in lanes):
        time.sleep(poll_s)
