"""A word to the user: a desktop notification where one is possible, and the user's own
`notify_command` (from the config file in the state home, never from the work tree).

The command is a program and its arguments, run without a shell: the message is its last
argument and the event, as JSON, its stdin. Neither may block nor fail the caller (often a
hook): one detached helper process, in a session of its own, runs them one after the other,
each for `TIMEOUT_S` at most, and writes any failure to `logs/notify.log` in the state home.
The caller only starts it and writes the event into a pipe the event always fits in.

Nothing the implementer can write is run: the desktop notifiers only from the system's own
folders, and the helper runs in the state home with a PATH that has no relative entry and
nothing inside the loop's worktree, so a `notify_command` named without a path cannot be
shadowed by a file the implementer planted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

MODULE = "autopilot_codex.notify"
# Where the desktop notifiers are looked for: the system's, never the hook's PATH.
SYSTEM_BIN = ("/usr/bin", "/bin")
TIMEOUT_S = 30.0
# Each text field of an event is clipped to this, so the whole event stays far below a
# pipe's buffer (64 KiB on Linux, 16 KiB at least elsewhere): writing it never waits.
FIELD_CHARS = 1_000
MAX_FIELDS = 12


def notify(event: dict[str, Any], message: str) -> None:
    """Tell the user, detached; never raises."""
    with contextlib.suppress(Exception):
        commands = [*_desktop(message)]
        if command := _command():
            commands.append([*command, message])
        if commands:
            worktree = event.get("worktree")
            _start(commands, _encode(event), worktree if isinstance(worktree, str) else "")


def _system(name: str) -> str | None:
    """`shutil.which(name, path=SYSTEM_BIN)` without `shutil` (and the `bz2` and `lzma` it
    loads), which a Stop that ends a loop would otherwise import for this lookup alone."""
    for folder in SYSTEM_BIN:
        candidate = os.path.join(folder, name)  # noqa: PTH118
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):  # noqa: PTH112
            return candidate
    return None


def _desktop(message: str) -> list[list[str]]:
    if sys.platform == "darwin":  # pragma: no cover - macOS only (platform.system's "Darwin")
        osascript = _system("osascript")
        # The message goes in as an argument of the script, never spliced into its text.
        script = 'on run argv\ndisplay notification (item 1 of argv) with title "autopilot-codex"\nend run'
        return [[osascript, "-e", script, message]] if osascript else []
    desktop = _system("notify-send")
    # The body is markup to a server that renders it (`<a href>`, `<img>`), and holds the
    # implementer's text (a question left to the user): sent as text, as the spec escapes it.
    body = message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return [[desktop, "autopilot-codex", body]] if desktop else []


def _command() -> list[str]:
    from .config import load_config

    with contextlib.suppress(Exception):
        return list(load_config().notify_command)
    return []


def _encode(event: dict[str, Any]) -> bytes:
    small = {
        str(k)[:64]: (v[:FIELD_CHARS] if isinstance(v, str) else v)
        for k, v in list(event.items())[:MAX_FIELDS]
        if v is None or isinstance(v, (str, int, float, bool))
    }
    return json.dumps(small, sort_keys=True, ensure_ascii=False).encode() + b"\n"


def safe_path(value: str, worktree: str) -> str:
    """PATH without relative entries and without folders inside the worktree."""
    inside = os.path.realpath(worktree) if worktree else ""
    kept = []
    for entry in value.split(os.pathsep):
        if not Path(entry).is_absolute():
            continue
        real = os.path.realpath(entry)
        if inside and (real == inside or real.startswith(inside.rstrip(os.sep) + os.sep)):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def _start(commands: list[list[str]], stdin: bytes, worktree: str) -> None:
    from . import detached
    from .paths import state_home

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PATH"] = safe_path(env.get("PATH", os.defpath), worktree)
    with contextlib.suppress(OSError, ValueError):
        state_home().mkdir(parents=True, exist_ok=True)
        read, write = os.pipe()
        with os.fdopen(write, "wb") as pipe:
            try:
                pid = detached.start(MODULE, [json.dumps(commands)], env, stdin=read)
            finally:
                os.close(read)
            detached.reap(pid)  # `watch` goes on
            pipe.write(stdin)


def main(argv: list[str]) -> int:
    """The detached helper, run in the state home."""
    from .paths import state_home

    with contextlib.suppress(OSError):
        os.chdir(state_home())
    return run(argv)


def run(argv: list[str]) -> int:
    """Each command with the event on stdin, bounded; always 0."""
    event = sys.stdin.buffer.read()
    try:
        commands = json.loads(argv[0])
    except (IndexError, ValueError):
        return 0
    for command in commands if isinstance(commands, list) else []:
        if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            _run_one(command, event)
    return 0


def _run_one(command: list[str], event: bytes) -> None:
    import subprocess  # the worker's, never the hook's

    try:
        done = subprocess.run(
            command,
            input=event,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        _log(command, f"still running after {TIMEOUT_S:.0f} s; stopped")
    except OSError as exc:
        _log(command, f"could not start: {exc}")
    else:
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
            _log(command, f"exit {done.returncode}" + (f": {tail}" if tail else ""))


def _log(command: list[str], what: str) -> None:
    from .paths import state_home

    with contextlib.suppress(OSError):
        log = state_home() / "logs" / "notify.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {command[0]}: {what}\n")
