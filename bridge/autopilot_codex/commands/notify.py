"""A word to the user: a desktop notification where one is possible, and the user's own
`notify_command` (from the config file in the state home, never from the work tree).

The command is a program and its arguments, run without a shell: the message is its last
argument and the event, as JSON, its stdin. Neither may block nor fail the caller: both are
started detached, their output dropped, and any error is swallowed.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
from typing import Any


def notify(event: dict[str, Any], message: str) -> None:
    desktop = shutil.which("notify-send")
    if desktop:
        _start([desktop, "autopilot-codex", message], b"")
    command = _command()
    if command:
        _start([*command, message], json.dumps(event, sort_keys=True).encode() + b"\n")


def _command() -> list[str]:
    from ..config import load_config

    with contextlib.suppress(Exception):
        return list(load_config().notify_command)
    return []


def _start(argv: list[str], stdin: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        child = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        # Small enough for the pipe's buffer: writing it never waits on the child.
        with contextlib.suppress(OSError):
            if child.stdin is not None:
                child.stdin.write(stdin[:4096])
                child.stdin.close()
        # Reaped when it ends, should this process still be there (`watch` goes on); a daemon
        # thread never holds this process's exit.
        threading.Thread(target=child.wait, daemon=True).start()
