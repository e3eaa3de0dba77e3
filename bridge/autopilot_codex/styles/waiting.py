"""A Stop while the host still runs background work for the session (Claude Code's
`background_tasks`: a shell started with `run_in_background`, a background subagent): the
session is paused until that work wakes it, so the turn is not over. Every style lets it
through with this line and judges the Stop that comes after the wake-up."""

from __future__ import annotations

# Tasks named in the line at most; the rest are counted.
SHOWN = 3


def line(tasks: tuple[str, ...], then: str) -> str:
    """`autopilot-codex: 2 background tasks still running (npm test; ...); <then> once they end.`"""
    shown = "; ".join(tasks[:SHOWN]) + (f"; {len(tasks) - SHOWN} more" if len(tasks) > SHOWN else "")
    several = len(tasks) != 1
    return (
        f"autopilot-codex: {len(tasks)} background task{'s' if several else ''} still running "
        f"({shown}); {then} once {'they end' if several else 'it ends'}."
    )
