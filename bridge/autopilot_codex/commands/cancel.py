"""`cancel`: end a ralph loop now. Deterministic: the bridge writes it under the loop's lock,
so the next Stop finds the loop off (no marker) and lets the session end."""

from __future__ import annotations

from pathlib import Path

from ..store import Store
from ..styles import a_loop, of
from . import entry, worktree_of


def cancel(*, cwd: str | Path) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.readable(with_plan=False)
        if state is None or state.status not in ("running", "paused"):
            if store.guarded() and (state is None or of(state).ENDED_BY == "cancel"):
                # A loop that kept its rails (capped, stalled, damaged): the user ends them.
                store.release()
                store.append_event("cancel", decision="rails off", reason="the user's cancel")
                return (
                    "autopilot-codex: no ralph loop is running here; its safety rails are off now."
                )
            return "autopilot-codex: no ralph loop is running here; nothing to cancel."
        said = of(state).cancel(store, state)
        if said is None:
            return (
                f"autopilot-codex: the loop here is {a_loop(state.style)}, not ralph; "
                f"stop it with {entry(of(state).ENDED_BY)}."
            )
        store.release()
    return said
