"""The resident helper forks the background workers its children ask for (`helper_workers`).

This process plays the helper: it makes the pairs, serves the request a thread (the child)
sends, and is the worker's parent. The worker is a probe that reports how it was started.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex import detached, helper
from autopilot_codex.helper_workers import Workers, asker

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc, seqpacket")

PROBE = "tests.unit.helper_worker_probe"


@pytest.fixture
def workers() -> Iterator[Workers]:
    made = Workers()
    yield made
    for end in made.ends.values():
        end.close()


def ask(workers: Workers, *call: object) -> int | None:
    """The child's request from a thread, served here as the helper's loop serves it."""
    before = set(workers.ends)
    end = workers.pair()
    assert end is not None
    (mine,) = set(workers.ends) - before
    said: dict[str, int | None] = {}

    def child() -> None:
        said["pid"] = asker(end)(*call)  # type: ignore[arg-type]

    thread = threading.Thread(target=child)
    thread.start()
    workers.serve(select.select([mine], [], [])[0])
    thread.join()
    end.close()
    return said["pid"]


def no_child_started() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_worker_is_detached_and_holds_only_what_the_child_passed(
    workers: Workers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(detached, "WORKERS", detached.WORKERS | {PROBE})
    other = workers.pair()  # another child's end: never the worker's
    assert other is not None
    lock = tmp_path / "shadow.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    there = tmp_path / "there"
    there.mkdir()
    report = tmp_path / "report.json"
    env = {"PATH": os.defpath, "ONLY": "this"}
    try:
        pid = ask(workers, PROBE, [str(report), str(fd)], env, str(there), {fd: fd})
    finally:
        os.close(fd)  # the child lets go: the worker's copy holds the lock
    assert pid is not None
    assert os.waitpid(pid, 0)[1] >> 8 == 3  # its main's exit code
    other.close()
    seen = json.loads(report.read_text())
    assert seen["ppid"] == os.getpid()  # forked by the helper, not by the child
    assert seen["sid"] == seen["pid"]  # a session of its own: the hook's group is not its
    assert seen["cwd"] == str(there)
    assert seen["env"] == env
    mask = os.umask(0o022)
    os.umask(mask)
    assert seen["umask"] == mask
    assert [n for n, _ in seen["fds"]] == [0, 1, 2, fd]
    assert [t for _, t in seen["fds"][:3]] == [os.devnull] * 3
    assert seen["kept"] == list(lock.stat()[1:3])


def test_a_request_for_anything_but_a_worker_starts_nothing(
    workers: Workers, tmp_path: Path
) -> None:
    """The helper forks only `detached.WORKERS`' mains, whatever the request names."""
    report = tmp_path / "report.json"
    assert ask(workers, PROBE, [str(report), "-1"], {}, str(tmp_path), {}) is None
    assert ask(workers, "os", ["x"], {}, str(tmp_path), {}) is None
    assert no_child_started()
    assert not report.exists()


def test_a_malformed_request_starts_nothing(workers: Workers, tmp_path: Path) -> None:
    end = workers.pair()
    assert end is not None
    fields = [b"autopilot_codex.notify", b"[]", b"", b"18", b"0,1"]  # two kept, none passed
    here = os.open(tmp_path, os.O_RDONLY)
    try:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, here.to_bytes(4, sys.byteorder))]
        end.sendmsg([helper.encode(fields)], rights)
    finally:
        os.close(here)
    end.sendall(b"garbage")
    for _ in range(2):
        workers.serve(select.select(list(workers.ends), [], [])[0])
    assert end.recv(8) == b"N"
    assert end.recv(8) == b"N"
    assert no_child_started()
    end.close()


def test_only_the_helper_and_its_child_hold_a_pair(workers: Workers) -> None:
    """No file names a pair, and neither end passes to a program the child runs or to a new
    child: nothing but the child the helper made it for can ask."""
    first = workers.pair()
    second = workers.pair()
    assert first is not None and second is not None
    for end in (first, second, *workers.ends.values()):
        assert not os.get_inheritable(end.fileno())
    helpers_ends = list(workers.ends.values())
    workers.in_child()  # as a new waiter does: the helper's ends are not its own
    assert all(end.fileno() == -1 for end in helpers_ends)
    first.close()
    second.close()


def test_a_child_whose_helper_is_gone_starts_the_worker_itself(tmp_path: Path) -> None:
    workers = Workers()
    end = workers.pair()
    assert end is not None
    for mine in workers.ends.values():
        mine.close()
    assert asker(end)("autopilot_codex.notify", [], {}, str(tmp_path), {}) is None
    end.close()
