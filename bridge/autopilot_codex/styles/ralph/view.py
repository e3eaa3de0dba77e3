"""How `status` shows a ralph loop: iteration, prompt and promise, as plainly as one file."""

from __future__ import annotations

import time

from ...hosts import get, label
from ...meters import spend_lines
from ...state import State
from ...store import Store
from .record import RalphRecord

PROMPT_SHOWN = 300


def status_text(state: State, store: Store) -> str:
    ralph = state.own
    if not isinstance(ralph, RalphRecord):
        return f"autopilot-codex: ralph {state.status} (no ralph record)\nState: {store.state_path}"
    cap = str(state.max_iterations) if state.max_iterations else "unlimited"
    promise = ralph.completion_promise or "none (runs to the iteration limit)"
    owner = f"{state.session_id[:8]} in {label(state.host)}" if state.session_id else "unclaimed"
    minutes = max(0.0, time.time() - state.started_epoch) / 60
    lines = [
        f"autopilot-codex: ralph {state.status} — iteration {state.iteration}/{cap}",
        f"Prompt: {abbreviated(ralph.prompt)}",
        f"Promise: {promise}",
        f"Session {owner} · started {minutes:.0f} min ago · stalls {state.idle_stop_blocks}/"
        f"{ralph.stall_limit}",
    ]
    from ...checks.run import status_lines
    from ...hostwall import status_line

    lines += spend_lines(state, state.budget_usd or None, store.tail_events(20), get(state.host))
    lines += [line for line in (status_line(state.wall, state.wall_missing),) if line]
    lines += status_lines(state)
    if state.stop_reason:
        lines.append(f"Stop reason: {state.stop_reason}")
    result = store.load_result() if state.status != "running" else None
    if result is not None:
        lines.append(
            f"Result: {result.get('why')} after {_iterations(result.get('iterations'))} "
            f"in {result.get('duration_s')}s ({store.result_path})"
        )
    lines.append(f"State: {store.state_path}")
    return "\n".join(lines)


def abbreviated(prompt: str, limit: int = PROMPT_SHOWN) -> str:
    """The prompt on one line, cut with a marker that says how much is not shown."""
    line = " ".join(prompt.split())
    if len(line) <= limit:
        return line
    return f"{line[:limit]} [... {len(line) - limit} more characters]"


def _iterations(count: object) -> str:
    return f"{count} iteration{'' if count == 1 else 's'}"
