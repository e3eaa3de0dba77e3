"""A hook that failed: in a guarded loop, never an allow (issue 33).

In a loop behind the wall (`State.wall == "on"`) the bridge's answer is the gate the user
counts on, so a crash while answering (an internal error, a file name it cannot decode, git
output it cannot parse) must not read as "go on": a PreToolUse is denied and a Stop blocked,
the crash named in one line. A Stop must not be blocked forever either: after STOP_LIMIT crash
blocks in a row the loop is paused (when its state still loads) and the Stop let through with
the reason; the rails stay on until the user stops the loop. The count lives beside the state,
not in it, as the state may be what failed to load.

An unguarded loop keeps the non-blocking answer: it promises nothing against its implementer
(there the rails are a seatbelt, not a wall), and a bug of ours should not halt work the user
chose to run without the wall; the crash is still named and logged.

Standard library only: the gate's own fallback (`exit_for`) runs when the engine itself may
not import. Only a failure or a Stop comes here, so pathlib's import costs no idle hook.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from .paths import project_dir

# Crash blocks of a Stop in a row before the loop is paused and the Stop let through.
STOP_LIMIT = 3
# Events whose answer gates something: a crash there must not read as an allow.
GATES = ("PreToolUse", "Stop")
COUNT_FILE = "crash-stops"
_MAX_DETAIL = 200


def _state(worktree: str) -> object:
    """state.json as plain JSON (the engine's loader may be what failed); None if unreadable."""
    import json

    try:
        return json.loads((project_dir(worktree) / "state.json").read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def walled(worktree: str) -> bool:
    """Did the loop here start behind the wall? A state that cannot say reads as walled."""
    data = _state(worktree)
    wall = data.get("wall") if isinstance(data, dict) else None
    return wall not in ("", "partly", "off")


def _idle(worktree: str) -> bool:
    """The loop is not running (paused, stopped, done; or its state is gone, so there is
    nothing left to drive): its Stop gates nothing."""
    if not (project_dir(worktree) / "state.json").exists():
        return True
    data = _state(worktree)
    status = data.get("status") if isinstance(data, dict) else None
    return isinstance(status, str) and status != "running"


def describe(event: str, exc: BaseException, log: str = "") -> str:
    """One line naming the crash (a message may hold newlines or a whole file name). The line
    reaches the implementer, so the message goes with credentials redacted, or not at all."""
    try:
        from .credentials import redact

        detail = " ".join(redact(str(exc)).split())
    except Exception:  # noqa: BLE001 - what cannot be redacted is not shown
        detail = ""
    if len(detail) > _MAX_DETAIL:
        detail = detail[: _MAX_DETAIL - 1] + "…"
    where = f"; details in {log}" if log else ""
    said = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return f"autopilot-codex: internal error in the {event or 'hook'} hook ({said}){where}"


def verdict(event: str, worktree: str, what: str) -> tuple[str, str]:
    """("deny" | "block" | "pass", the line to show) for a hook that failed in a walled loop."""
    what = " ".join(what.split())  # a BridgeError's message may run over lines
    if event == "PreToolUse":
        return "deny", (
            f"{what}. This call is denied: the loop is guarded and its supervisor could not "
            "judge it."
        )
    if event != "Stop":
        return "pass", what
    if _idle(worktree):
        return "pass", f"{what}. The loop is not running: the Stop is let through."
    count = _count(worktree)
    if 0 < count <= STOP_LIMIT:
        return "block", (
            f"{what}. This Stop is blocked ({count} of {STOP_LIMIT}): the loop is guarded and "
            "its supervisor could not judge the turn; end the turn again."
        )
    reset(worktree)
    if count < 0:
        return "pass", f"{what}. The Stop is let through: its crash count cannot be kept."
    paused = _pause(worktree, f"{STOP_LIMIT} Stops in a row the supervisor could not judge")
    return "pass", f"{what}. {paused} The safety rails stay on until `autopilot-codex stop`."


def _count(worktree: str) -> int:
    """This crash block's number in the current run of them; -1 when it cannot be kept."""
    path = project_dir(worktree) / COUNT_FILE
    try:
        before = int(path.read_bytes()[:16] or b"0")
    except (OSError, ValueError):
        before = 0
    try:
        path.write_text(str(before + 1), encoding="ascii")
    except OSError:
        return -1
    return before + 1


def reset(worktree: str) -> None:
    """A Stop answered: the next crash starts a new run of blocks."""
    with contextlib.suppress(OSError):
        (project_dir(worktree) / COUNT_FILE).unlink()


def _pause(worktree: str, reason: str) -> str:
    """Pause the running loop, if its state still loads; say what happened."""
    try:
        from .store import Store

        store = Store(Path(worktree))
        with store.locked():
            state = store.load(with_plan=False)
            if state is None or state.status != "running":
                return "The loop was not running."
            store.save(state.evolve(status="paused", stop_reason=reason))
            store.append_event("hook.crash", decision="paused", reason=reason)
    except Exception as exc:  # noqa: BLE001 - the crash that led here may be this one too
        return f"The loop could not be paused ({type(exc).__name__}); the Stop is let through."
    return f"The loop is paused: {reason}; `autopilot-codex resume` after a fix."


def exit_for(event: str, worktree: str, exc: BaseException, log: str = "") -> int:
    """The gate's fallback when the engine could not answer at all (it did not import, the
    helper's child died): exit 2 with the reason on stderr is the one answer both hosts read
    as deny/block without our renderer. Unguarded, or an event that gates nothing: exit 0."""
    import sys

    what = describe(event, exc, log)
    if event not in GATES or not walled(worktree):
        sys.stderr.write(f"{what}; this hook was skipped\n")
        return 0
    kind, line = verdict(event, worktree, what)
    sys.stderr.write(line + "\n")
    return 0 if kind == "pass" else 2
