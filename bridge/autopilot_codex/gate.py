"""The first thing a hook runs: decide, with `os`, `sys` and the C JSON scanner only, whether this hook
has anything to do. Most hooks fire in sessions with no loop in their worktree, and those
must cost no more than starting the interpreter.
"""

from __future__ import annotations

import os
import sys

from .loopindex import locate
from .loopindex import payload_field as payload_field  # the hosts' contract test reads it here

# typing.TYPE_CHECKING without importing typing on every hook (mypy reads the name the same way)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .admitted import Admitted

# The payload's fields that carry the session and its folder, as the registered hosts name them
# (each host's `event` reads the same fields). The gate reads them before any host is loaded;
# a host that names them otherwise adds its names here (`tests/unit/hosts/test_contract.py`).
SESSION_FIELDS = ("session_id",)
CWD_FIELDS = ("cwd",)
# A hook payload carries at most a file's content; anything larger is cut before parsing.
MAX_STDIN_BYTES = 32 * 1024 * 1024
# Hosts write the payload at once and close: a hook gives up on its input after this (issue 27).
STDIN_TIMEOUT_S = 5.0


def hook_main(argv: list[str], *, own_process: bool = False) -> int:
    """`hook <event> --host <host>`: the gate, then the engine only if a loop here cares.

    Exit 0, even for a broken install, except where a walled loop's PreToolUse or Stop could
    not be answered (`failclosed`): exit 2, the hosts' deny/block, with the reason on stderr.
    `own_process`: this process exists for this hook alone (the launcher's), so the engine
    loaded here may compile its records through the kept code (`classcode`).
    """
    try:
        admitted = admit(read_stdin(), argv[0] if argv else "")
    except Exception as exc:  # noqa: BLE001 - no loop known: nothing to hold closed
        sys.stderr.write(f"autopilot-codex: hook skipped ({type(exc).__name__}: {exc})\n")
        return 0
    if admitted is None:
        return 0
    try:
        code = helped(argv, admitted)
        if code is not None:
            return code
        if own_process:
            from . import classcode

            classcode.install()
        _late_site()
        from .hookrun import run_hook

        try:
            return run_hook(argv, admitted)
        finally:
            if own_process:
                classcode.save()
    except Exception as exc:  # noqa: BLE001 - a loop is here: a guarded one fails closed
        return engine_failed(argv, admitted, exc)


def engine_failed(argv: list[str], admitted: Admitted, exc: BaseException) -> int:
    """The engine could not answer a hook of this loop (it did not import, the helper's child
    died): `failclosed.exit_for`; should even that fail, a tool call is denied."""
    event = argv[0] if argv else ""
    try:
        from .failclosed import exit_for

        return exit_for(event, admitted.worktree, exc)
    except Exception:  # noqa: BLE001 - the last line: even the fallback is broken
        # Nothing can say whether the loop is walled or count a Stop's blocks: a tool call is
        # denied (that wedges nothing), anything else goes on.
        what = (
            f"autopilot-codex: internal error in the {event or 'hook'} hook ({type(exc).__name__})"
        )
        deny = event == "PreToolUse"
        sys.stderr.write(f"{what}; {'this call is denied' if deny else 'this hook was skipped'}\n")
        return 2 if deny else 0


def helped(argv: list[str], admitted: Admitted) -> int | None:
    """The exit code when the resident helper answered this hook (see `helper`); None: the
    direct path runs here, as it would without a helper."""
    from .helper import run_via_helper

    return run_via_helper(argv, admitted)


def _late_site() -> None:
    """The launcher starts hooks without `site` (python -S): the gate needs only the stdlib,
    and most hooks end there. A hook that reaches the engine needs the environment's packages:
    load `site` now, as a normal start would have."""
    if "site" not in sys.modules:
        import site

        site.main()


def read_stdin(timeout: float = STDIN_TIMEOUT_S) -> bytes:
    """The payload, read until the host closes its end; raises `InputTimeout` (the hook then
    allows, see hook_main) when that takes longer than `timeout`: a host or wrapper that never
    closes stdin must not hold the session for the hook's whole timeout."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (tests feed a buffer)
        try:
            return sys.stdin.buffer.read(MAX_STDIN_BYTES)
        except (OSError, ValueError):
            return b""
    import select
    import time

    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + timeout
    while size < MAX_STDIN_BYTES:
        left = deadline - time.monotonic()
        try:
            ready = left > 0 and select.select([fd], [], [], left)[0]
            chunk = os.read(fd, min(1 << 20, MAX_STDIN_BYTES - size)) if ready else None
        except (OSError, ValueError):
            break
        if chunk is None:
            raise InputTimeout(f"its input did not end within {timeout:g} s")
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class InputTimeout(Exception):
    """The host never closed the hook's stdin."""


def admit(raw: bytes, event: str = "") -> Admitted | None:
    """None when no guarded loop can care about this payload (the silent allow).

    The loop is found by containment: the deepest guarded worktree that holds the cwd's real
    path, whatever `.git` lies between (a nested clone, a submodule, `mkdir sub/.git`).
    PreToolUse is admitted for every session there: the rails guard the worktree, not a
    session. The loop's own events are admitted for its owner only; an unowned loop hears
    nothing but a prompt the user typed (UserPromptSubmit), which is how it is claimed.
    """
    session, found = locate(raw, (SESSION_FIELDS, CWD_FIELDS))
    if found is None:
        return None
    worktree, marker, repair = found
    style = marker.get("style")
    from .admitted import Admitted  # only a hook that reached a loop pays for its module
    from .defaults import STYLE

    admitted = Admitted(raw, worktree, style if isinstance(style, str) and style else STYLE, repair)
    if event in ("PreToolUse", "SessionStart") or repair or marker.get("owner") == "driver":
        # A driver-owned loop (rounds) starts a fresh session per round: every one is admitted.
        # Every session start too, whoever's: the files it reads to decide what to run are
        # compared with the loop's start (`hostfiles`).
        return admitted
    owner = marker.get("session_id")
    if isinstance(owner, str) and owner:
        # An owned loop has nothing to claim: the owner's prompts cost it no engine start.
        return admitted if session == owner and event != "UserPromptSubmit" else None
    return admitted if event == "UserPromptSubmit" else None
