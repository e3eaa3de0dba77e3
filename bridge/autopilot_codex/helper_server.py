"""The resident helper: one process per user, state home and plugin version that keeps the
engine imported and forks a child for each admitted hook (see `helper` for the hook's side).

Each child is the direct path with its imports done: it takes the hook's environment, argv,
umask, working directory, stdout and stderr, and runs `hookrun.run_hook` on the payload the
gate already read. The helper itself never runs a hook and keeps nothing between hooks: every
child starts from the state the helper had right after its imports.

It starts on demand (a hook that found none), serves from a socket in a user-only folder of the
state home, and exits when no loop has run for LINGER_S, when nobody asked for IDLE_S, when its
socket was removed or replaced, or when its code changed on disk (the next hook starts a fresh
one). A hook never depends on it: see `helper.run_via_helper`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import sys
import time
from typing import TYPE_CHECKING

from . import helper
from .helper_sources import Sources
from .helper_workers import Workers

if TYPE_CHECKING:
    import socket

# No loop in the state home for this long: the helper exits.
LINGER_S = 120.0
# No hook for this long: the helper exits, loop or not.
IDLE_S = 900.0
# Where `_account` writes, when asked (set by `main`).
STATS = ""
# How often an idle helper looks at the loops, its socket and its code.
TICK_S = 1.0


def main(argv: list[str]) -> int:
    """`<home> <version>`, started by `helper._spawn`."""
    if len(argv) < 2 or argv[1] != helper.version():
        return 0  # started by a hook of another version: that one starts its own
    home, ver = argv[0], argv[1]
    sock_path, lock_path, _ = helper.names(home, ver)
    run = helper.run_dir(home)
    try:
        os.makedirs(run, mode=0o700, exist_ok=True)
        if not helper.private_dir(run):
            return 0
        os.chdir(run)
        lock = _lock(lock_path)
    except OSError:
        return 0
    if lock is None:
        return 0  # another helper of this version serves (or is starting)
    _preload()
    # The loaded engine is never collected: its objects leave the collector's lists, so a
    # child's collections do not walk (and copy, page by page) what it shares with us.
    gc.collect()
    gc.freeze()
    if os.environ.get("AUTOPILOT_CODEX_HELPER_STATS") == "1":
        global STATS  # noqa: PLW0603 - one per process, set once before serving
        STATS = os.path.join(run, f"{os.path.basename(sock_path)}.cpu")
    sources = Sources()
    import socket

    token = _write_token(helper.token_path(sock_path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = os.path.basename(sock_path)
    try:
        os.unlink(name)  # a dead helper's socket: we hold the lock, so it is nobody's
    except FileNotFoundError:
        pass
    old = os.umask(0o077)
    try:
        listener.bind(name)
    finally:
        os.umask(old)
    listener.listen(64)
    served = Served(home, os.stat(name).st_ino)
    try:
        serve(listener, (ver, token), lock, sources, served)
    finally:
        served.remove_socket(name)
        listener.close()
    return 0


def _write_token(path: str) -> bytes:
    """A new secret for this helper's life (see helper._read_token), readable by the user only."""
    token = os.urandom(32).hex().encode()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(token)
    return token


def _lock(path: str) -> int | None:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _preload() -> None:
    """Everything an admitted hook imports, and the shell grammar the rails load on first use."""
    import hmac  # noqa: F401
    import subprocess  # noqa: F401
    import threading  # noqa: F401

    from . import (  # noqa: F401
        announce,
        crashlog,
        failclosed,
        helper_child,
        hookrun,
        host,  # noqa: F401
        hosts,
        notify,
        state_ranges,
        store,
    )
    from .rails import judge, parser
    from .shadow import hook  # noqa: F401

    for each in hosts.every():  # each host's package, and its spend reader's modules
        each.spend_reader()
    from .styles.autopilot import background, handlers  # noqa: F401

    parser.parse("true")
    del judge
    from . import sandbox

    sandbox.wall()  # the sandbox is probed here once, not by every hook's child
    _warm_records()
    _warm_rails()
    from . import styles

    for name in styles.STYLES:
        try:
            styles.STYLES.get(name)
        except Exception:  # noqa: BLE001, S112 - a style that fails to import fails in its hook
            continue


def _warm_records() -> None:
    """The strict loader's per-class field tables (typedjson), built once here rather than by
    every child's first state load (`typing.get_type_hints` is the slow part)."""
    import dataclasses

    from . import typedjson

    for name, module in list(sys.modules.items()):
        if not name.startswith("autopilot_codex"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and dataclasses.is_dataclass(value):
                try:
                    typedjson._spec(value)  # noqa: SLF001
                    typedjson._names(value)  # noqa: SLF001
                except Exception:  # noqa: BLE001, S112 - a record that does not load warms nothing
                    continue


def _warm_rails() -> None:
    """Judge two shell lines and read a payload once here: the interpreter specializes the
    code on first runs, and a child that inherits that does not redo it (about 2 ms of each
    PreToolUse). Pure judgements of an empty folder; nothing is written."""
    from pathlib import Path

    from . import defaults, hookio, hosts
    from .config import Config
    from .rails import judge

    host = hosts.get(defaults.HOST)
    where = os.getcwd()  # the run folder: no loop, no repository
    line = "cd src && pytest -q 2>&1 | tail -5 && git status && git push --force origin main"
    for command in (line, "ls"):
        raw = (
            b'{"session_id": "warm", "cwd": "%s", "tool_name": "Bash", '
            b'"tool_input": {"command": "%s"}}' % (where.encode(), command.encode())
        )
        try:
            payload = hookio.parse(raw, "PreToolUse", host)
            denial = judge.check(payload, Config(), Path(where), hosts.roster(), host)
            host.render("PreToolUse", hookio.Answer(deny=denial or ""))
        except Exception:  # noqa: BLE001, S112 - a warm-up that fails only leaves things cold
            continue


class Served:
    """What the idle checks need: the state home, our socket's inode, the last hook and loop."""

    def __init__(self, home: str, inode: int) -> None:
        self.home = home
        self.inode = inode
        now = time.monotonic()
        self.last_hook = now
        self.last_loop = now

    def ours(self, name: str) -> bool:
        try:
            return os.stat(name).st_ino == self.inode
        except OSError:
            return False

    def remove_socket(self, name: str) -> None:
        if self.ours(name):
            try:
                os.unlink(name)
            except OSError:
                pass

    def loops(self) -> bool:
        """Any marker in either index: the launcher's own test for "a loop may run here"."""
        for index in ("active", "rails"):
            try:
                if any(not n.startswith(".") for n in os.listdir(os.path.join(self.home, index))):
                    return True
            except OSError:
                continue
        return False

    def done(self, name: str, children: set[int]) -> bool:
        now = time.monotonic()
        if self.loops():
            self.last_loop = now
        if not self.ours(name):
            return True
        if children:
            return False
        return now - self.last_loop > LINGER_S or now - self.last_hook > IDLE_S


class Pipes:
    """The helper's three pipes: SIGCHLD wake-ups, the waiter's "took a hook" (T) or "the code
    changed" (Q), and one only the helper writes to, whose end tells a waiter it is gone."""

    def __init__(self) -> None:
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.taken_r, self.taken_w = os.pipe()
        self.life_r, self.life_w = os.pipe()

    def in_child(self) -> None:
        for fd in (self.wake_r, self.wake_w, self.taken_r, self.life_w):
            os.close(fd)


def serve(
    listener: socket.socket, who: tuple[str, bytes], lock: int, sources: Sources, served: Served
) -> None:
    """Keep one forked child waiting on the socket (a hook then reaches a process that is
    already running, with no fork in its way), and a new one ready each time it takes a hook;
    fork the background workers its children ask for (`helper_workers`)."""
    name = listener.getsockname()
    children: set[int] = set()
    pipes = Pipes()
    workers = Workers()
    # A child's exit wakes the loop, so it is reaped (and its CPU time accounted) at once.
    signal.set_wakeup_fd(pipes.wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiter = _fork_waiter(listener, who, lock, sources, pipes, workers)
    children.add(waiter)
    try:
        while True:
            asked = list(workers.ends)
            ready = select.select([pipes.wake_r, pipes.taken_r, *asked], [], [], TICK_S)[0]
            workers.serve(ready)
            if pipes.wake_r in ready:
                os.read(pipes.wake_r, 512)
                workers.reap()
            gone = _reap(children)
            if pipes.taken_r in ready:
                said = os.read(pipes.taken_r, 512)
                if b"Q" in said:
                    return
                served.last_hook = time.monotonic()
            elif waiter in gone:
                return  # it died without a hook: something is wrong; hooks run themselves
            else:
                if served.done(name, children - {waiter}) or sources.changed():
                    return
                continue
            waiter = _fork_waiter(listener, who, lock, sources, pipes, workers)
            children.add(waiter)
    finally:
        _end(waiter)


def _fork_waiter(
    listener: socket.socket,
    who: tuple[str, bytes],
    lock: int,
    sources: Sources,
    pipes: Pipes,
    workers: Workers,
) -> int:
    from .helper_child import wait_for_hook

    end = workers.pair()
    pid = os.fork()
    if pid:
        if end is not None:
            end.close()
        return pid
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(lock)
        pipes.in_child()
        workers.in_child()
        code = wait_for_hook(listener, who, sources.changed, pipes.life_r, pipes.taken_w, end)
    finally:
        os._exit(code)


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


def _reap(children: set[int]) -> set[int]:
    gone = set()
    for pid in list(children):
        try:
            done, _, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            done, usage = pid, None
        if done:
            children.discard(pid)
            gone.add(pid)
            if usage is not None and STATS:
                _account(usage.ru_utime + usage.ru_stime)
    return gone


def _account(cpu: float) -> None:
    """Benchmarks only (AUTOPILOT_CODEX_HELPER_STATS=1 where the helper started): each child's
    CPU seconds, a line in the helper's own folder, so a hook's cost counts the work done here."""
    try:
        with open(STATS, "a", encoding="ascii") as handle:
            handle.write(f"{cpu:.6f}\n")
    except OSError:
        pass
