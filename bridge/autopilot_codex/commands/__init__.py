"""What the slash commands and the terminal CLI do, one module per verb.

Each command returns the text to print and raises BridgeError for what the user must fix.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BridgeError
from ..paths import find_worktree

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from ..state import State
    from ..store import Store

    # One verb's dispatch: the parsed words, the directory and the session in; exit code and
    # text out.
    Verb = Callable[[argparse.Namespace, str, str | None], tuple[int, str]]

TERMINAL = ("done", "aborted")

# The host whose slash commands the output is read in; None for a terminal. Set once per
# process by the CLI (`--from claude`), read by every message that names a command.
_reader: list[str | None] = [None]


def read_in(host: str | None) -> None:
    if host is not None:
        from .. import hosts

        hosts.get(host)  # an unknown host is refused here, not in the middle of a message
    _reader[0] = host


def entry(verb: str) -> str:
    """How the reader of this output runs `verb`: a slash command inside a host, or the
    terminal command."""
    host = _reader[0]
    if host is None:
        return f"autopilot-codex {verb}"
    from .. import hosts

    return hosts.get(host).command(verb)


def no_loop() -> str:
    return f"autopilot-codex: no loop in this worktree. Start one with {entry('plan')} <goal>"


def worktree_of(cwd: str | Path) -> Path:
    """The guarded worktree that contains `cwd` (the deepest, as the hooks find it), else the
    git worktree around it: a `stop` typed in a nested clone still reaches the loop."""
    from ..loopindex import find_loop

    with contextlib.suppress(OSError, ValueError):
        if (found := find_loop(os.path.realpath(cwd))) is not None:
            return Path(found[0])
    worktree = find_worktree(cwd)
    if worktree is None:
        raise BridgeError(
            f"{cwd} is not inside a git repository; autopilot-codex needs one (run `git init`)"
        )
    return worktree


def replaced(store: Store, refusal: Callable[[State], str], with_plan: bool = True) -> State | None:
    """The loop a new one replaces, None when there is none or it was corrupt (moved aside, so
    the new loop starts clean); `refusal` says why not while it still runs."""
    previous = store.readable(with_plan=with_plan)
    if previous is not None and previous.status == "running":
        raise BridgeError(refusal(previous))
    return previous


def begin(store: Store, state: State, event: str, **fields: Any) -> tuple[State, str]:
    """A new loop's files, under the caller's lock: the plan first (a plan.json left by an
    earlier loop must not be read as ours), the state, the host's files, the start event. The
    line naming the host's run files that changed since the last loop here: the new loop takes
    them as they are (an earlier loop's implementer may have left them), so the user is told."""
    from ..hosts import hostfiles

    store.save_plan(state.plan)
    state = store.save(state)
    changed = hostfiles.record(store)
    checks = [c.command for c in state.checks]
    store.append_event(
        event,
        decision="running",
        session=state.session_id,
        checks=checks,
        accepted=changed,
        **fields,
    )
    return state, run_files_line(changed)


def run_files_line(changed: list[str]) -> str:
    """The files a host or git runs programs from that changed, as the loop takes them."""
    if not changed:
        return ""
    listed = ", ".join(changed)
    return f"Files the host or git runs programs from, accepted as they are now: {listed}"
