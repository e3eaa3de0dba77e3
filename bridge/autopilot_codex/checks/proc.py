"""One check command as a process: its own group, a hard time limit, a bounded output window,
walled in by the supervisor's sandbox (`sandbox/checkcall.py`).

The command's process group is always killed once it is over, on time or not: a check that
backgrounds a server and exits must not leave the server running in the user's session.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import check_command

# The bytes held while reading: enough for the kept tail of lines however long they are.
WINDOW_BYTES = 64 * 1024
CHUNK_BYTES = 64 * 1024
# Between SIGTERM and SIGKILL: time for a test runner to stop its workers cleanly.
GRACE_S = 2.0
# How long output is still read once the group is dead (a process outside it may hold the pipe).
DRAIN_S = 1.0
_POLL_S = 0.2
# A walled command ended by signal N exits 128 + N (signals go up to 64 on Linux).
_SIGNALLED = 128
_SIGNALS = 64


@dataclass(frozen=True)
class Outcome:
    # The return code as subprocess gives it (negative: the signal that ended it); None when
    # the command did not start or was stopped at its limit.
    exit_code: int | None
    # The last WINDOW_BYTES of stdout+stderr.
    output: bytes
    output_bytes: int
    duration_s: float
    limit_s: float
    timed_out: bool = False
    # Why bash could not be started at all, or "" when it was.
    start_error: str = ""
    # The run's time budget was spent before this check's turn came.
    skipped: bool = False
    # The loop's own files the check changed (put back since): it failed, whatever its code.
    tampered: tuple[str, ...] = ()


class _Window:
    """The tail of a stream, in bounded memory."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > WINDOW_BYTES:
            del self.data[: len(self.data) - WINDOW_BYTES]


def run(
    command: str, cwd: Path, env: dict[str, str], limit_s: float, *, network: bool = False
) -> Outcome:
    """Run `bash -c command` for at most `limit_s` seconds, inside the supervisor's sandbox
    where there is one (`network`: the user's `checks_network`); never raises for the
    command's sake."""
    if limit_s <= 0:
        return Outcome(None, b"", 0, 0.0, 0.0, timed_out=True, skipped=True)
    started = time.monotonic()
    argv = check_command(["bash", "-c", command], str(cwd), env, network=network)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return Outcome(None, b"", 0, 0.0, limit_s, start_error=str(exc))
    window = _Window()
    try:
        timed_out = _read(proc, window, started + limit_s)
    finally:
        # Also on an exception in the bridge itself: no check outlives its run.
        _end_group(proc)
        _drain(proc, window)
    code = None if timed_out else _code(proc.returncode, walled=argv[0] != "bash")
    return Outcome(
        code,
        bytes(window.data),
        window.total,
        time.monotonic() - started,
        limit_s,
        timed_out=timed_out,
    )


def _code(returncode: int, *, walled: bool) -> int:
    """The code as subprocess gives it: the sandbox reports a command a signal ended as the
    shell does (128 + the signal), which is read back as the signal (a negative code)."""
    if walled and _SIGNALLED < returncode <= _SIGNALLED + _SIGNALS:
        return _SIGNALLED - returncode
    return returncode


def _read(proc: subprocess.Popen[bytes], window: _Window, deadline: float) -> bool:
    """Read until the command is over; True when the deadline came first."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        open_pipe = True
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return proc.poll() is None
            if not open_pipe:
                # Output closed early (`exec >/dev/null`): wait for the exit alone.
                try:
                    proc.wait(timeout=remaining)
                except subprocess.TimeoutExpired:
                    return True
                return False
            if selector.select(min(remaining, _POLL_S)):
                chunk = os.read(fd, CHUNK_BYTES)
                if not chunk:
                    open_pipe = False
                    continue
                window.add(chunk)
            # bash is gone but something it started still holds the pipe (and may write on,
            # a server's log): the check is over, and that leftover is killed with the group.
            # Asked after output too, or a chatty leftover would hold the check to its limit.
            if proc.poll() is not None:
                return False


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the whole group, give it GRACE_S, then SIGKILL what is left."""
    group = proc.pid  # start_new_session made the command the leader of its own group
    if not _signal(group, signal.SIGTERM):
        proc.wait()
        return
    ends = time.monotonic() + GRACE_S
    while time.monotonic() < ends and _alive(proc, group):
        time.sleep(0.05)
    _signal(group, signal.SIGKILL)
    proc.wait()
    # SIGKILL is delivered asynchronously; the caller is promised an empty group.
    ends = time.monotonic() + GRACE_S
    while time.monotonic() < ends and _alive(proc, group):
        time.sleep(0.02)


def _alive(proc: subprocess.Popen[bytes], group: int) -> bool:
    proc.poll()
    return _signal(group, 0) and _has_live_member(group)


def _has_live_member(group: int) -> bool:
    """Whether the group has a member that is not a zombie waiting for its reaper.

    Orphans are reparented to whatever reaps them; where that is slow, a zombie would keep
    `killpg(group, 0)` true for the whole grace period. Without /proc, assume alive.
    """
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return True
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        # Fields after the command name, which is in parentheses and may contain anything.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == group and fields[0] != b"Z":
            return True
    return False


def _signal(group: int, sig: int) -> bool:
    """Send `sig` to the group; False when no process of it is left."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member changed its credentials (setuid); the rest were still signalled.
        return True
    return True


def _drain(proc: subprocess.Popen[bytes], window: _Window) -> None:
    """Keep what was written just before the end; bounded, in case the pipe stays open."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    ends = time.monotonic() + DRAIN_S
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < ends and selector.select(max(0.0, ends - time.monotonic())):
            chunk = os.read(fd, CHUNK_BYTES)
            if not chunk:
                break
            window.add(chunk)
    with contextlib.suppress(OSError):
        proc.stdout.close()
