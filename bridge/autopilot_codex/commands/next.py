"""`next`: the current task contract."""

from __future__ import annotations

from pathlib import Path

from .. import contract
from ..store import Store
from . import no_loop, worktree_of


def next_task(*, cwd: str | Path) -> str:
    state = Store(worktree_of(cwd)).load()
    if state is None:
        return no_loop()
    task = state.task()
    if task is None:
        return f"autopilot-codex: {state.status}; no current task."
    return f"autopilot-codex ({state.status}):\n" + contract.task_contract(
        task, state.task_position()
    )
