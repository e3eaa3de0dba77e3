"""`stop`: the user's deterministic cancel; every hook reads it before anything else."""

from __future__ import annotations

from pathlib import Path

from .. import guards
from ..store import Store
from . import entry, worktree_of


def stop(*, cwd: str | Path, reason: str) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load()
        if state is None or state.status not in ("running", "paused"):
            return "autopilot-codex: no running loop here; nothing to stop."
        state = store.save(guards.stop(state, reason))
        why = state.stop_reason
        store.append_event("stop", decision="stopped", reason=why)
    return (
        f"autopilot-codex: loop stopped ({why}). The hooks are no-ops from now on; "
        f"state kept at {store.state_path}. Resume with {entry('resume')}."
    )
