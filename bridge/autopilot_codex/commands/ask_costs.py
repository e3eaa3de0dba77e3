"""`ask --costs`: what each way of settling a question costs, from this loop's own settings.

The consultation skill points here instead of quoting prices that go stale: the model, the
prompt bound, the output bound and the caps are the ones this loop runs with.
"""

from __future__ import annotations

from pathlib import Path

from ..config import load_config
from ..errors import BridgeError
from ..paths import find_worktree
from ..spend import of_state
from ..spend import usd as money
from ..state import State
from ..store import Store
from ..styles.autopilot.consult import consultations_of_task, max_consultations
from ..styles.autopilot.record import of


def costs(*, cwd: str | Path) -> str:
    from ..manager.select import worst_case_usd

    config = load_config()
    state = _loop(cwd)
    model = of(state).model if state else config.model
    # Every manager prompt is bounded by prompt_chars, so one worst case covers ask and verdict
    # (for ASCII: each call's own hold prices its text's bytes).
    call = worst_case_usd(config, model, "x" * config.prompt_chars, config.max_output_tokens)
    limit = max_consultations(config)
    iterations = state.max_iterations if state else config.max_iterations
    left = (
        f", {max(0, limit - consultations_of_task(state))} left for task {of(state).current_task}"
        if state and of(state).current_task
        else ""
    )
    rows = [
        ("settle it yourself", "$0", "none"),
        (
            "autopilot-codex ask",
            f"up to ${call:.2f}",
            f"not an iteration, no-progress streak untouched; at most {limit} per task{left}",
        ),
        (
            "end the turn with the question",
            f"up to ${call:.2f} (the verdict)",
            f"1 of {iterations} iterations; +1 no-progress streak without a new commit "
            f"({config.no_progress_limit} in a row aborts the loop)",
        ),
        (
            "ask the user",
            f"up to ${call:.2f} (the turn ends: same verdict)",
            "the same iteration, and the verdict may go on without the user's answer",
        ),
    ]
    lines = [
        f"What settling a question costs (manager {model}; worst case of one call: "
        f"{config.prompt_chars:,}-character prompt of ASCII, {config.max_output_tokens:,} "
        "output tokens, an invalid first answer retried once; a character outside ASCII may "
        "cost up to 4 tokens, and each call is held at its own text's bytes):",
        "| option | manager cost | what it costs the loop |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    if state is not None:
        spent = of_state(state)  # the loop's one figure: the implementer's spend too
        lines.append(
            f"Budget: {spent.total_text()} used, {money(spent.left or 0.0)} "
            f"left; iteration {state.iteration}/{state.max_iterations}; "
            f"no-progress streak {of(state).no_progress_streak}."
        )
    return "\n".join(lines)


def _loop(cwd: str | Path) -> State | None:
    worktree = find_worktree(cwd)
    if worktree is None:
        return None
    try:
        return Store(worktree).load(with_plan=False)
    except BridgeError:
        return None
