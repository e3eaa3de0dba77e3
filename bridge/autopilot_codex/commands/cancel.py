"""`cancel`: end a ralph loop now. Deterministic: the bridge writes it under the loop's lock,
so the next Stop finds the loop off (no marker) and lets the session end."""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import StateCorrupt
from ..store import Store
from ..styles.ralph.handlers import end
from . import entry, worktree_of
from .resume import a_loop


def cancel(*, cwd: str | Path) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        try:
            state = store.load(with_plan=False)
        except StateCorrupt:
            state = None
        if state is None or state.status not in ("running", "paused"):
            if store.guarded() and (state is None or state.style == "ralph"):
                # A loop that kept its rails (capped, stalled, damaged): the user ends them.
                store.release()
                store.append_event("cancel", decision="rails off", reason="the user's cancel")
                return (
                    "autopilot-codex: no ralph loop is running here; its safety rails are off now."
                )
            return "autopilot-codex: no ralph loop is running here; nothing to cancel."
        if state.style != "ralph" or state.ralph is None:
            return (
                f"autopilot-codex: the loop here is {a_loop(state.style)}, not ralph; "
                f"stop it with {entry('stop')}."
            )
        ralph = state.ralph
        end(store, state, ralph, "cancelled", "cancelled by the user", time.time())
        store.release()
    cap = str(ralph.max_iterations) if ralph.max_iterations else "unlimited"
    return (
        f"autopilot-codex: ralph loop cancelled at iteration {ralph.iteration}/{cap}; the next "
        f"Stop ends normally. Result in {store.result_path}."
    )
