"""What every loop style shares, as pure functions over the state: who owns a loop and the
one claim of it, the bookkeeping of tool runs and compactions, the meter's
charge, and the user's stop and resume. (The autopilot loop's own guards and endings live in
`styles/autopilot/caps.py`.)

Nothing here touches files, git, the clock or the network, so every branch is a table test.
"""

from __future__ import annotations

from .decision import Decision, Step, allow, block
from .state import State

__all__ = ["Decision", "Step", "allow", "block"]  # the decision's names, importable from here


def owns(state: State, session_id: str | None) -> bool:
    """Whether this session's hooks act on the loop.

    `session` policy: only the session that owns it. An unowned loop (planned from a terminal
    without `--session-id`) is nobody's until a typed prompt `claim`s it: no tool, Stop or compaction
    hook ever claims it, so a session the implementer starts from its shell cannot. A hook
    without a session id owns nothing (failing closed keeps it from spending).
    `driver` policy: every session of the worktree, since the driver starts a fresh one per
    round; the style decides what each hook may do.
    """
    if state.owner == "driver":
        return True
    if not session_id or session_id == "null":
        return False
    return state.session_id == session_id


def claim(
    state: State, session_id: str | None, host: str | None = None, *, typed: bool = False
) -> State:
    """The loop as seen by a hook of `session_id` running in `host`: `state` itself when
    nothing changes. The owner's hooks record the host it runs in. Only a prompt the user
    typed (`typed`, UserPromptSubmit) gives an unowned running loop its owner.

    Why a typed prompt: a loop planned from a terminal must go to the session the user works
    in. That session's prompt comes before any tool it runs, so before any host session its
    implementer could start from its shell: a nested session always finds the loop owned.
    """
    if state.owner == "driver" or not session_id or session_id == "null":
        return state
    if not state.session_id:
        if not typed or state.status != "running":
            return state
        return state.evolve(session_id=session_id, host=host or state.host)
    if typed or state.session_id != session_id or not host or state.host == host:
        return state
    return state.evolve(host=host)


def on_tool(state: State) -> State:
    """A tool ran in the owning session: the implementer is working, so the stall count resets."""
    return state.evolve(
        tool_events=state.tool_events + 1, idle_stop_blocks=0, compaction_pending=False
    )


def on_compact(state: State) -> State:
    return state.evolve(compaction_pending=True)


def charge(state: State, cost_usd: float) -> State:
    return state.evolve(budget_used_usd=state.budget_used_usd + cost_usd)


def stop(state: State, reason: str) -> State:
    """The user's stop: deterministic, written by the bridge, read first by every hook."""
    return state.evolve(status="stopped", stop_reason=reason.strip() or "stopped by the user")


def resume(state: State, *, budget_usd: float | None, max_iterations: int | None) -> State:
    update: dict[str, object] = {
        "status": "running",
        "stop_reason": None,
        "idle_stop_blocks": 0,
        "own": state.own and state.own.resumed(),
        "generation": state.generation + 1,
    }
    if budget_usd is not None:
        update["budget_usd"] = budget_usd
    if max_iterations is not None:
        update["max_iterations"] = max_iterations
    return state.evolve(**update)
