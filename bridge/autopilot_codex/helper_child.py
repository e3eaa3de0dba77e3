"""One hook in a child of the resident helper (`helper_server`): wait on the socket, take the
hook's request, and become the hook's process to run the direct path's code on it.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import helper

if TYPE_CHECKING:
    import socket

# A child waits this long for the rest of the request and for the hook's go.
REQUEST_TIMEOUT_S = 10.0


def wait_for_hook(
    listener: socket.socket,
    who: tuple[str, bytes],
    changed: Callable[[], bool],
    life: int,
    taken: int,
    end: socket.socket | None = None,
) -> int:
    """Accept one hook; leave when the helper is gone (its pipe ends). `end`: this child's end
    of its pair with the helper, to ask it for workers (`helper_workers`)."""
    listener.setblocking(False)
    while True:
        ready = select.select([listener.fileno(), life], [], [])[0]
        if life in ready:
            return 0
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        break
    listener.close()
    if changed():
        # The code on disk is not the code loaded: this hook runs itself, the helper ends.
        os.write(taken, b"Q")
        conn.close()
        return 0
    os.write(taken, b"T")
    for fd in (life, taken):
        os.close(fd)
    conn.setblocking(True)
    return child(conn, who, end)


def child(conn: socket.socket, who: tuple[str, bytes], end: socket.socket | None = None) -> int:
    """One hook in a forked child; returns the exit code."""
    ver, token = who
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    conn.settimeout(REQUEST_TIMEOUT_S)
    try:
        fields = receive(conn)
    except (OSError, ValueError):
        return 0
    try:
        if len(fields) < 10 or not _trusted(conn, fields, ver, token):
            conn.sendall(b"S\n")
            return 0
        conn.sendall(b"R" + ver.encode() + b"\n")
        go, fds = _go(conn)
    except OSError:
        return 0
    if go != b"G" or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return 0
    if end is not None:
        # A hook that knew the secret: from here this child may have the helper fork workers.
        from . import detached
        from .helper_workers import asker

        detached.ASK = asker(end)
    conn.settimeout(None)
    _watch(conn)
    take_over(fields, fds)
    code = run(fields)
    try:
        conn.sendall(b"E%d" % code)
    except OSError:
        pass
    return code


def _trusted(conn: socket.socket, fields: list[bytes], ver: str, token: bytes) -> bool:
    """This release, this helper's secret, and (where the system says) this user."""
    import hmac
    import socket

    if fields[0] != ver.encode() or not hmac.compare_digest(fields[9], token):
        return False
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    cred = conn.getsockopt(socket.SOL_SOCKET, option, 12)
    return int.from_bytes(cred[4:8], sys.byteorder) == os.getuid()


def receive(conn: socket.socket) -> list[bytes]:
    """The request: its length, then its fields (helper.encode)."""
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(64)
        if not chunk or len(data) > 64:
            raise ValueError("no request")
        data += chunk
    head, _, body = data.partition(b"\n")
    total = int(head)
    chunks = [body]
    size = len(body)
    while size < total:
        chunk = conn.recv(min(1 << 20, total - size))
        if not chunk:
            raise ValueError("the request ended early")
        chunks.append(chunk)
        size += len(chunk)
    return helper.decode(b"".join(chunks))


def _go(conn: socket.socket) -> tuple[bytes, list[int]]:
    """The hook's go, with its stdout, stderr and working directory."""
    import socket

    data, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(3 * 4))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
    return data, fds


def _watch(conn: socket.socket) -> None:
    """End this child when the hook that waits for it is gone (the host killed it at its
    timeout): the direct path would have died with it. A bare thread: `threading` waits until
    it runs, a scheduling delay on the hook's path for a thread that only waits."""
    import _thread

    def wait() -> None:
        try:
            conn.recv(1)
        except OSError:
            pass
        os._exit(0)

    _thread.start_new_thread(wait, ())


def take_over(fields: list[bytes], fds: list[int]) -> None:
    """Become the hook's process: its environment, argv, umask, cwd, stdout and stderr."""
    import io

    os.environ.clear()
    for pair in fields[2].split(b"\0") if fields[2] else []:
        key, _, value = pair.partition(b"=")
        if key:
            os.environb[key] = value
    os.umask(int(fields[3]))
    os.fchdir(fds[2])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    for fd in (null, *fds):
        os.close(fd)
    out_enc, err_enc = fields[8].decode().split("\0")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=out_enc)
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding=err_enc, errors="backslashreplace"
    )
    argv = [os.fsdecode(a) for a in fields[1].split(b"\0")] if fields[1] else []
    sys.argv = [sys.argv[0], "hook", *argv]


def run(fields: list[bytes]) -> int:
    from .admitted import Admitted
    from .hookrun import run_hook

    argv = sys.argv[2:]
    admitted = Admitted(fields[7], os.fsdecode(fields[4]), fields[5].decode(), fields[6] == b"1")
    try:
        code = run_hook(argv, admitted)
    except Exception as exc:  # noqa: BLE001 - as the direct path: a hook always answers
        from .gate import engine_failed

        code = engine_failed(argv, admitted, exc)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code
