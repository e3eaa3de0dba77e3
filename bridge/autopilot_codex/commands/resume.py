"""`resume`: a paused or stopped loop runs again, optionally with new caps; a running loop
takes new caps at once."""

from __future__ import annotations

from pathlib import Path

from .. import contract, guards, meters
from ..config import flag
from ..errors import BridgeError
from ..hosts import hostfiles
from ..hostwall import headline, host_wall
from ..spend import usd
from ..state import State
from ..store import Store
from ..styles import a_loop, of
from ..styles.autopilot.record import position_of, task_of
from . import TERMINAL, entry, no_loop, run_files_line, worktree_of


def how_to_resume(state: State) -> str:
    """What takes a stopped loop on again: `resume` is the autopilot's only; a ralph loop
    restarts with its own command; a run resumes with its driver."""
    verb = of(state).RESUMED_BY
    return (
        f"resume with {entry(verb)}" if verb == "resume" else f"start it again with {entry(verb)}"
    )


def resume(
    *,
    cwd: str | Path,
    budget_usd: str | float | None,
    max_iterations: str | int | None,
    session_id: str | None,
    max_tokens: str | int | None = None,
    max_duration: str | float | None = None,
) -> str:
    # Refused before the state is touched: a NaN budget would never be reached.
    budget, iterations = flag("budget_usd", budget_usd), flag("max_iterations", max_iterations)
    # The other caps (issue 22), as the config reads them; they count from the loop's start.
    caps = {
        "max_tokens": flag("max_tokens", max_tokens),
        "max_seconds": flag("max_duration", max_duration),
    }
    extra = {k: v for k, v in caps.items() if v is not None}
    store = Store(worktree_of(cwd))
    with store.locked():
        state = store.load()
        if state is None:
            return no_loop()
        state = state.evolve(**extra) if extra else state
        # The whole ledger, once, before the user's resume trusts the loop again.
        store.audit()
        if of(state).RESUMED_BY != "resume":  # another verb takes this style's loops on
            raise BridgeError(
                f"the last loop here was {a_loop(state.style)}; {how_to_resume(state)}"
            )
        if state.status in TERMINAL:
            raise BridgeError(f"the loop is {state.status}; plan a new goal with {entry('plan')}")
        _check_caps(state, budget, iterations)
        if state.status != "running" and (why := hostfiles.unnamed(store, state)):
            return f"autopilot-codex: not resumed: {why}; then {how_to_resume(state)}."
        if state.status == "running":
            # After a crash the user resumes from a new session: the running loop goes to it
            # (only the user types `resume`; a driver's loop stays with its driver).
            handed = bool(session_id) and session_id != state.session_id
            handed = handed and state.owner != "driver"
            if budget is None and iterations is None and not extra and not handed:
                return "autopilot-codex: the loop is already running."
            changed = _new_caps(state, budget, iterations)
            if handed:
                changed = changed.evolve(session_id=session_id)
                store.append_event("handover", previous=state.session_id, session=session_id)
            store.save(changed)
            said = "autopilot-codex: the loop is running"
            if handed:
                said += f"; it now belongs to session {str(session_id)[:8]}"
            if budget is not None or iterations is not None or extra:
                store.append_event("caps", budget_usd=budget, max_iterations=iterations, **extra)
                said += f"; new caps apply now {_caps(budget, iterations, extra)}"
            return said + "."
        resumed = guards.resume(state, budget_usd=budget, max_iterations=iterations)
        # The session that resumes may not be the one that planned: ownership is claimed afresh.
        resumed = resumed.evolve(session_id=session_id or None)
        # The wall is judged afresh: the user may have fixed it (or loosened it) meanwhile.
        wall = host_wall(state.host, store.worktree)
        resumed = resumed.evolve(wall=wall.level, wall_missing=list(wall.missing))
        resumed = store.save(resumed)
        # Resuming accepts the run files as they are now (a stop named any that changed).
        accepted = hostfiles.record(store)
        store.append_event("resume", decision="running", previous=state.status, accepted=accepted)
    task = task_of(resumed)
    text = f"autopilot-codex: loop resumed (was {state.status})."
    text += f"\n{line}" if (line := run_files_line(accepted)) else ""
    if task is not None:
        text += "\nContinue with:\n" + contract.task_contract(task, position_of(resumed))
    return text + "\n" + headline(wall)


def _check_caps(state: State, budget: float | None, iterations: int | None) -> None:
    if (capped := meters.over(state, meters.clock(), None)) is not None:
        flag = "--max-tokens N" if capped[0] == "stopped_tokens" else "--max-duration TIME"
        raise BridgeError(f"{capped[1]}; resume with a larger one: {entry('resume')} {flag}")
    if (budget if budget is not None else state.budget_usd) <= meters.total_usd(state):
        raise BridgeError(
            f"the budget is used up ({usd(meters.total_usd(state))} of "
            f"{usd(budget if budget is not None else state.budget_usd)}); "
            f"resume with a larger one: {entry('resume')} --budget USD"
        )
    if (iterations if iterations is not None else state.max_iterations) <= state.iteration:
        raise BridgeError(
            f"the iteration limit {iterations or state.max_iterations} is reached "
            f"(iteration {state.iteration}); resume with {entry('resume')} --max-iterations N"
        )


def _new_caps(state: State, budget: float | None, iterations: int | None) -> State:
    given = {"budget_usd": budget, "max_iterations": iterations}
    return state.evolve(**{k: v for k, v in given.items() if v is not None})


def _caps(budget: float | None, iterations: int | None, extra: dict[str, object]) -> str:
    parts = [
        f"budget ${budget:.2f}" if budget is not None else "",
        f"at most {iterations} iteration{'' if iterations == 1 else 's'}" if iterations else "",
    ]
    # 0 lifts the cap (as in the config).
    tokens, seconds = extra.get("max_tokens"), extra.get("max_seconds")
    if isinstance(tokens, int):
        parts.append(f"at most {tokens} tokens" if tokens else "no token cap")
    if isinstance(seconds, float):
        parts.append(f"at most {meters.duration(seconds)}" if seconds else "no time cap")
    return "(" + ", ".join(p for p in parts if p) + ")"
