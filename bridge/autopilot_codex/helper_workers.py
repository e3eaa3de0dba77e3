"""Background workers forked by the resident helper, not started by its children.

A hook's child (`helper_child`) that starts a worker (the shadow's snapshot, the review, the
notifier: `detached.WORKERS`) asks the helper over a socket pair the helper made for it before
forking it: no file names it, so only that child can ask, and only once a hook that knew the
helper's secret was taken (`helper_child.child` sets `detached.ASK` then). The helper forks the
worker from its warm image: the hook waits for no exec, and the worker skips the engine's
imports. The worker is what `detached.start` would have made: a session of its own, no stdio,
no descriptor but those the child passed (at the numbers it names), the child's environment,
umask and working directory.

One message each way: the request (fields as `helper.encode`, the working directory and the
kept descriptors as rights), then `P<pid>` (started) or `N` (nothing started: the child starts
the worker itself). A pair that ends before the answer means the helper ended before it forked
anything (it answers every request it reads); no answer in REPLY_TIMEOUT_S is an OSError, as a
failed start is.
"""

from __future__ import annotations

import array
import contextlib
import os
import signal
import socket
import sys
from typing import TYPE_CHECKING

from . import detached, helper

if TYPE_CHECKING:
    from .detached import Ask

# How long a child waits for the helper's answer; the helper answers between two selects.
REPLY_TIMEOUT_S = 10.0
# The most descriptors one request may pass: the working directory and two kept ones.
_MAX_FDS = 3
_LIMIT = 1 << 20


class Workers:
    """The helper's ends of its children's pairs, and the workers it forked."""

    def __init__(self) -> None:
        self.ends: dict[int, socket.socket] = {}
        self.pids: set[int] = set()

    def pair(self) -> socket.socket | None:
        """A new pair for the next child: the child's end (the helper keeps the other)."""
        try:
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except (OSError, AttributeError):
            return None  # no sequenced packets here: the child starts its workers itself
        self.ends[mine.fileno()] = mine
        return theirs

    def in_child(self) -> None:
        """In a new child: the helper's ends are not its to hold."""
        for end in self.ends.values():
            end.close()
        self.ends.clear()

    def serve(self, ready: list[int]) -> None:
        for fd in ready:
            end = self.ends.get(fd)
            if end is not None:
                self._one(end)

    def _one(self, end: socket.socket) -> None:
        try:
            data, ancillary, flags, _ = end.recvmsg(_LIMIT, socket.CMSG_SPACE(_MAX_FDS * 4))
        except OSError:
            data, ancillary, flags = b"", [], 0
        fds = _rights(ancillary)
        if not data:  # the child ended
            for fd in fds:
                os.close(fd)
            del self.ends[end.fileno()]
            end.close()
            return
        pid = 0
        try:
            if not flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                pid = _fork(data, fds, self)
        finally:
            for fd in fds:
                os.close(fd)
        if pid:
            self.pids.add(pid)
        with contextlib.suppress(OSError):
            end.send(b"P%d" % pid if pid else b"N")

    def reap(self) -> None:
        for pid in list(self.pids):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.pids.discard(pid)


def _rights(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return list(fds)


def _fork(data: bytes, fds: list[int], workers: Workers) -> int:
    """Fork the worker the request names; its pid, or 0 for a request that names no worker."""
    try:
        module, args, env, mask, targets = helper.decode(data.partition(b"\n")[2])
        numbers = [int(t) for t in targets.split(b",")] if targets else []
        job = (module.decode(), [os.fsdecode(a) for a in args.split(b"\0")] if args else [])
        umask = int(mask)
    except (ValueError, UnicodeDecodeError):
        return 0
    if (
        job[0] not in detached.WORKERS
        or len(fds) != 1 + len(numbers)
        or len(set(numbers)) != len(numbers)
    ):
        return 0
    try:
        pid = os.fork()
    except OSError:
        return 0
    if pid:
        return pid
    code = 1
    try:
        _become(env, umask, fds[0], dict(zip(numbers, fds[1:], strict=True)), workers)
        code = _run(*job)
    finally:
        os._exit(code)  # noqa: B012 - a forked worker never returns into the helper's loop


def _become(env: bytes, umask: int, cwd: int, kept: dict[int, int], workers: Workers) -> None:
    """A detached process: its own session, the child's environment, umask and working
    directory, /dev/null for stdio but a kept 0, and no descriptor of the helper's."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    workers.ends.clear()
    workers.pids.clear()
    os.fchdir(cwd)
    # Above every descriptor we keep, then every other one closed, then each at its number.
    top = max([2, cwd, *kept, *kept.values()]) + 1
    import fcntl

    moved = {number: fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, top) for number, fd in kept.items()}
    low = top
    for fd in sorted(moved.values()):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(3, top)
    os.closerange(low, 1 << 20)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd not in moved:
            os.dup2(null, fd)
    if null > 2:
        os.close(null)
    for number, fd in moved.items():
        os.dup2(fd, number)
        os.close(fd)
    os.umask(umask)
    os.environ.clear()
    for pair in env.split(b"\0") if env else []:
        key, _, value = pair.partition(b"=")
        if key:
            os.environb[key] = value


def _run(module: str, args: list[str]) -> int:
    import importlib

    sys.argv = ["-c", *args]
    try:
        code = importlib.import_module(module).main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a worker's own errors are its to log; it ends here
        return 1
    return code if isinstance(code, int) else 0


def asker(end: socket.socket) -> Ask:
    """`detached.ASK` for a child holding `end` of its pair."""
    end.settimeout(REPLY_TIMEOUT_S)

    def ask(
        module: str, args: list[str], env: dict[str, str], cwd: str, keep: dict[int, int]
    ) -> int | None:
        mask = os.umask(0o022)
        os.umask(mask)
        message = helper.encode(
            [
                module.encode(),
                b"\0".join(os.fsencode(a) for a in args),
                b"\0".join(os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()),
                str(mask).encode(),
                b",".join(b"%d" % n for n in keep),
            ]
        )
        here = os.open(cwd, os.O_RDONLY | os.O_DIRECTORY)
        try:
            rights = array.array("i", [here, *keep.values()]).tobytes()
            end.sendmsg([message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
        except OSError:
            return None  # nothing reached the helper: nothing started
        finally:
            os.close(here)
        try:
            said = end.recv(32)
        except OSError as exc:
            raise OSError(f"the helper did not say whether it started the worker: {exc}") from exc
        if said[:1] == b"P" and said[1:].isdigit():
            return int(said[1:])
        return None  # refused, or the helper ended before it read the request

    return ask
