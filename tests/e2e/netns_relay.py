"""Carry loopback TCP ports of the test process into a loopback-only network namespace.

A namespace made by ``unshare -n`` has its own, empty loopback: the fake servers the test
runs on 127.0.0.1 are not there. Unix sockets are files, so they cross the boundary:

- in the test process, :class:`UnixToTcp` listens on a unix socket and connects each client
  to ``127.0.0.1:<port>``;
- inside the namespace, this file run as a script brings ``lo`` up, listens on the same
  ``127.0.0.1:<port>`` numbers, relays each connection to its unix socket, and runs the
  command after ``--`` (its exit code is the script's).

    unshare -n python3 netns_relay.py --forward 8123=/tmp/x/8123.sock -- codex exec ...
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

_BUFFER = 65536


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(_BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _splice(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    try:
        upstream = connect()
    except OSError:
        client.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, connect: Callable[[], socket.socket]) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_splice, args=(client, connect), daemon=True).start()


class UnixToTcp:
    """Unix sockets (one per port) relayed to ``127.0.0.1:<port>`` of this process."""

    def __init__(self, ports: Sequence[int]) -> None:
        self.ports = list(ports)
        # AF_UNIX paths are short (108 bytes): a fresh short directory, not tmp_path.
        self._dir = Path(tempfile.mkdtemp(prefix="nsr-", dir="/tmp"))
        self._listeners: list[socket.socket] = []

    def path(self, port: int) -> Path:
        return self._dir / f"{port}.sock"

    def forwards(self) -> list[str]:
        return [f"{port}={self.path(port)}" for port in self.ports]

    def __enter__(self) -> UnixToTcp:
        for port in self.ports:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(self.path(port)))
            listener.listen(64)
            self._listeners.append(listener)

            def connect(port: int = port) -> socket.socket:
                return socket.create_connection(("127.0.0.1", port), timeout=None)

            threading.Thread(target=_serve, args=(listener, connect), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        for listener in self._listeners:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for port in self.ports:
            with contextlib.suppress(OSError):
                self.path(port).unlink()
        with contextlib.suppress(OSError):
            self._dir.rmdir()


def _listen_tcp(port: int, unix_path: str) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)

    def connect() -> socket.socket:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(unix_path)
        return upstream

    threading.Thread(target=_serve, args=(listener, connect), daemon=True).start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forward", action="append", default=[], metavar="PORT=UNIX_PATH")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("a command is needed after --")
    up = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, check=False)
    if up.returncode != 0:
        print(f"netns_relay: ip link set lo up failed: {up.stderr!r}", file=sys.stderr)
        return 125
    for spec in args.forward:
        port, _, path = spec.partition("=")
        _listen_tcp(int(port), path)
    # The listeners are bound before the command starts, so its first connection succeeds.
    proc = subprocess.run(command, check=False, env=os.environ.copy())
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


if __name__ == "__main__":
    sys.exit(main())
