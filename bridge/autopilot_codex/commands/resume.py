"""`resume`: a paused or stopped loop runs again, optionally with new caps."""

from __future__ import annotations

from pathlib import Path

from .. import contract, guards
from ..errors import BridgeError
from ..store import Store
from . import NO_LOOP, TERMINAL, worktree_of


def resume(
    *, cwd: str | Path, budget_usd: float | None, max_iterations: int | None, session_id: str | None
) -> str:
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load()
        if state is None:
            return NO_LOOP
        if state.status == "running":
            return "autopilot-codex: the loop is already running."
        if state.style != "autopilot":
            # A ralph loop restarts with its own command; a run resumes with its driver.
            again = "ralph-loop" if state.style == "ralph" else "`autopilot-codex run --resume`"
            raise BridgeError(f"the last loop here was a {state.style} loop; start it again with {again}")
        if state.status in TERMINAL:
            raise BridgeError(
                f"the loop is {state.status}; plan a new goal with /autopilot-codex:codex-plan"
            )
        budget = budget_usd if budget_usd is not None else state.budget_usd
        if budget <= state.budget_used_usd:
            raise BridgeError(
                f"the budget is used up (${state.budget_used_usd:.2f} of ${state.budget_usd:.2f}); "
                "resume with a larger one: --budget USD"
            )
        iterations = max_iterations if max_iterations is not None else state.max_iterations
        if iterations <= state.iteration:
            raise BridgeError(
                f"the iteration limit {state.max_iterations} is reached; resume with --max-iterations N"
            )
        resumed = guards.resume(state, budget_usd=budget_usd, max_iterations=max_iterations)
        # The session that resumes may not be the one that planned: ownership is claimed afresh.
        resumed = resumed.evolve(session_id=session_id or None)
        resumed = store.save(resumed)
        store.append_event("resume", decision="running", previous=state.status)
    task = resumed.task()
    text = f"autopilot-codex: loop resumed (was {state.status})."
    if task is not None:
        text += "\nContinue with:\n" + contract.task_contract(task, resumed.task_position())
    return text
