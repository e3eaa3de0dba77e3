"""The files git and the hosts run programs from, held to what the loop started with.

When a loop starts (`plan`, `ralph`, `run`, `resume`) the bridge records a digest of every
such file in the worktree (`runfiles.py`: each host's list and git's) beside the loop's
state, where a walled implementer can neither read nor write. At each session start (the
SessionStart hook) and before each round (the rounds driver) it compares: a file added,
changed or removed stops the loop, named, with a `hostfiles.changed` event, so the change is
the user's to accept (`resume` records the files anew) before a supervised host reads it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import surrogates
from ..fileio import read_text
from ..runfiles import changes, scan

if TYPE_CHECKING:
    from ..hookio import Answer
    from ..state import State
    from ..store import Store

MANIFEST = "hostfiles.json"
# How many changed files a stop reason names; the event lists them all.
NAMED = 5


def _current(store: Store) -> dict[str, str]:
    from . import roster

    return scan(store.worktree, roster().run_files())


def record(store: Store) -> list[str]:
    """Record the files as they are now; what differs from the last record (none the first
    time), for the start to say."""
    before = _recorded(store)
    now = _current(store)
    store.write_beside(MANIFEST, json.dumps(now, indent=1, sort_keys=True) + "\n")
    return [] if before is None else changes(before, now)


def _recorded(store: Store) -> dict[str, str] | None:
    text = read_text(store.dir / MANIFEST)
    if text is None:
        return None
    try:
        data = surrogates.loads(text)
    except ValueError:
        return {}  # a damaged record: every file now reads as added
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def stop_if_changed(store: Store, at: str) -> str:
    """At a session or round start (`at` says which): stop a running loop whose run files
    changed since it started, and return why; "" when nothing changed or no loop runs. A loop
    with no record (started before this check existed) gets one now."""
    with store.locked():
        state = store.load(with_plan=False)
        if state is None or state.status != "running":
            return ""
        before = _recorded(store)
        if before is None:
            record(store)
            store.append_event("hostfiles.recorded", decision="recorded", at=at)
            return ""
        return stopped(store, state, at, changes(before, _current(store)))


def unnamed(store: Store, state: State) -> str:
    """`resume`, under its lock: a run file changed that no stop named yet (planted where the
    wall cannot hold it, then the loop stopped or paused another way) stops the loop now,
    named; "" when none did or the loop's stop named them, which the resume then accepts."""
    before = _recorded(store)
    if before is None or (state.stop_reason or "").startswith(CHANGED):
        return ""
    return stopped(store, state, "resume", changes(before, _current(store)))


CHANGED = "a file the host or git reads to decide what to run changed"


def stopped(store: Store, state: State, at: str, found: list[str]) -> str:
    if not found:
        return ""
    more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
    reason = (
        f"{CHANGED} since the loop started: {', '.join(found[:NAMED])}{more}. Check it; a "
        "loop resumed or started again accepts the files as they are then"
    )
    store.save(state.evolve(status="stopped", stop_reason=reason))
    store.append_event("hostfiles.changed", decision="stopped", at=at, files=found)
    return reason


def session_start(store: Store, source: str | None) -> Answer | None:
    """The SessionStart hook's part, whoever's session starts: the loop stopped, told to the
    user and to the implementer, when a run file changed; None when nothing did."""
    why = stop_if_changed(store, f"{source or 'session'} start")
    if not why:
        return None
    from ..contract import PREFIX
    from ..hookio import Answer
    from ..output import terminal_command

    message = (
        f"{PREFIX} stopped: {why}. The safety rails stay on until the user runs "
        f"{terminal_command('stop')}."
    )
    context = f"{message}\nThe loop no longer supervises this work: start nothing; tell the user."
    return Answer(message=message, context=context)
