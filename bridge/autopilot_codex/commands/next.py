"""`next`: the current task contract."""

from __future__ import annotations

from pathlib import Path

from .. import contract
from ..store import Store
from ..styles.autopilot.record import position_of, task_of
from . import no_loop, worktree_of


def next_task(*, cwd: str | Path) -> str:
    store = Store(worktree_of(cwd))
    state = store.load()
    if state is None:
        return no_loop()
    task = task_of(state)
    if task is None:
        return f"autopilot-codex: {state.status}; no current task."
    from ..styles.autopilot.findings_store import view_lines

    found = view_lines(store, state, task.id)
    return f"autopilot-codex ({state.status}):\n" + "\n".join(
        [contract.task_contract(task, position_of(state)), *found]
    )
