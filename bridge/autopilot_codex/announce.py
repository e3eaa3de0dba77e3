"""A word to the user when a hook (or a review worker) ends a loop or pauses it for them.

Only the process that wrote the change knows it happened, under the lock, once: the `Store`
keeps each status change it saved (`Store.moved`), and the writer calls `announce` after its
work. So every transition out of `running` (done, aborted, a guard's or a meter's stop, a pause
for the user, a question left to the user) is told exactly once, by the one that made it. The
user's own commands (`stop`, `cancel`, `resume`) are not told back to the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import State
    from .store import Store

EVENT = "loop.transition"


def event_of(before: str, state: State, via: str) -> dict[str, Any]:
    return {
        "event": EVENT,
        "from": before,
        "status": state.status,
        "reason": state.stop_reason or "",
        "worktree": state.worktree,
        "style": state.style,
        "task": state.own.working_on() if state.own else "",
        "session": state.session_id,
        "via": via,
        "ts": state.updated_at,
    }


def announce(store: Store, via: str) -> None:
    """Tell each transition out of `running` this store wrote; never raises, never waits."""
    moved, store.moved = store.moved, []
    told = [(before, state) for before, state in moved if before == "running"]
    if not told:
        return
    try:
        from .notify import notify

        for before, state in told:
            why = f" ({state.stop_reason})" if state.stop_reason else ""
            notify(
                event_of(before, state, via),
                f"autopilot-codex: {state.worktree}: {state.status}{why}",
            )
    except Exception:  # noqa: BLE001 - a word to the user never costs a hook its answer
        from .crashlog import log_crash

        log_crash("notification")
