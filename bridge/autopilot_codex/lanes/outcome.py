"""How a lanes run ended: its status and why, the user's branch, and the record `run` prints."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..durable.steps import step
from . import worktrees
from .record import LanesRun

EXIT_CODES = {"complete": 0, "incomplete": 2, "budget": 2, "error": 1, "interrupted": 130}


def end(root: Path, run: LanesRun) -> None:
    """Complete when every planned task (or its follow-up) merged; the user's branch gets the
    merged work either way (an interrupted run waits for its resume)."""
    if run.status == "interrupted":
        return
    merged = run.merged()
    left = [t.id for t in run.tasks if not t.follows and t.id not in merged]
    args = (root, run.run, run.user_branch, run.user_sha, run.integration)
    run.finish = step("lanes.finish", worktrees.finish, *args)
    if not left:
        run.status, run.why = "complete", "every task merged"
        return
    run.status = "budget" if run.starved else "incomplete"
    run.why = f"not merged: {', '.join(left)}"
    run.why += f" ({run.starved})" if run.starved else ""


def result(run: LanesRun, record: Path) -> dict[str, Any]:
    return {
        "status": run.status,
        "exit_code": EXIT_CODES[run.status],
        "why": run.why,
        "run": run.run,
        "finish": run.finish,
        "lanes": run.lanes,
        "manager_calls": run.manager_calls,
        "spent": run.budget.spent.record(),
        "tasks": [asdict(t) | {"spec": None} for t in run.tasks],
        "record": str(record),
    }
