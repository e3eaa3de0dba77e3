"""`stop`: the user's deterministic cancel; every hook reads it before anything else."""

from __future__ import annotations

from pathlib import Path

from .. import guards
from ..store import Store
from . import worktree_of
from .resume import how_to_resume


def stop(*, cwd: str | Path, reason: str) -> str:
    """Stop a running or paused loop, and take the rails off any loop that kept them (paused,
    aborted, stopped by a guard or by tamper evidence, or with its state damaged)."""
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.readable()
        if state is None or state.status not in ("running", "paused"):
            if not store.guarded():
                return "autopilot-codex: no running loop here; nothing to stop."
            store.release()
            was = state.status if state is not None else "without a readable state"
            store.append_event("stop", decision="rails off", reason=f"the user's stop (loop {was})")
            return f"autopilot-codex: the loop here was {was}; its safety rails are off now."
        state = store.save(guards.stop(state, reason))
        store.release()
        why = state.stop_reason
        how = how_to_resume(state)
        store.append_event("stop", decision="stopped", reason=why)
    return (
        f"autopilot-codex: loop stopped ({why}). The hooks and rails are off from now on; "
        f"state kept at {store.state_path}. {how[:1].upper() + how[1:]}."
    )
