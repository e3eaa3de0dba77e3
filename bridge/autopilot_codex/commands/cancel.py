"""`cancel`: end a ralph loop now. Deterministic: the bridge writes it under the loop's lock,
so the next Stop finds the loop off (no marker) and lets the session end."""

from __future__ import annotations

import time
from pathlib import Path

from ..store import Store
from ..styles.ralph.handlers import end
from . import entry, worktree_of


def cancel(*, cwd: str | Path) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load(with_plan=False)
        if state is None or state.status not in ("running", "paused"):
            return "autopilot-codex: no ralph loop is running here; nothing to cancel."
        if state.style != "ralph" or state.ralph is None:
            return (
                f"autopilot-codex: the loop here is a {state.style} loop, not ralph; "
                f"stop it with {entry('stop')}."
            )
        ralph = state.ralph
        end(store, state, ralph, "cancelled", "cancelled by the user", time.time())
    cap = str(ralph.max_iterations) if ralph.max_iterations else "unlimited"
    return (
        f"autopilot-codex: ralph loop cancelled at iteration {ralph.iteration}/{cap}; the next "
        f"Stop ends normally. Result in {store.result_path}."
    )
