"""A fourth loop style that exists only in the tests: proof that a style is one package and one
registry line (`STYLES.with_member("green", load)`), with nothing else in the bridge changed.

"Checks until green": a Stop is blocked while the loop's user checks fail, and let through
(the loop done) once they pass. Its own record counts the Stops it blocked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from autopilot_codex import typedjson
from autopilot_codex.checks.evidence import gather
from autopilot_codex.checks.records import CheckSpec
from autopilot_codex.checks.run import failure_reason
from autopilot_codex.hookio import ALLOW, Answer
from autopilot_codex.state import State, StyleRecord, planless
from autopilot_codex.store import Store
from autopilot_codex.styles import HookContext

NAME = "green"
STARTED_BY = "green"
RESUMED_BY = "green"
ENDED_BY = "cancel"


@dataclass(frozen=True)
class GreenRecord(StyleRecord, style=NAME):
    blocked: int = 0

    def check(self) -> None:
        if self.blocked < 0:
            raise typedjson.Invalid("green.blocked", "negative")


def start(worktree: str, head: str, session_id: str, checks: list[CheckSpec]) -> State:
    """A new green loop (the fixture's own `start`: it has no command of its own)."""
    return planless(
        goal="make the checks pass",
        worktree=worktree,
        head=head,
        style=NAME,
        own=GreenRecord(),
        session_id=session_id,
        checks=checks,
    )


def handle(ctx: HookContext) -> Answer:
    if ctx.payload.event != "Stop":
        return ALLOW
    with ctx.store.locked():
        state = ctx.store.load(with_plan=False)
        if state is None or state.status != "running" or not isinstance(state.own, GreenRecord):
            return ALLOW
        own = state.own
        if state.session_id != ctx.payload.session_id:
            return ALLOW  # another session's loop: not this Stop's to judge
        state, results = gather(ctx.store, state, manager_calls=0, call_timeout_s=0.0)
        red = failure_reason(results)
        if red:
            ctx.store.save(state.evolve(own=own.evolve(blocked=own.blocked + 1)))
            return Answer(block=red)
        ctx.store.save(state.evolve(status="done", stop_reason="the checks are green"))
        return Answer(message="green: the checks pass")


def status_text(state: State, store: Store, entry: Callable[[str], str]) -> str:
    blocked = state.own.blocked if isinstance(state.own, GreenRecord) else 0
    return f"autopilot-codex: green {state.status} — {blocked} Stops blocked; end with {entry(ENDED_BY)}"


def cancel(store: Store, state: State) -> str:
    store.save(state.evolve(status="stopped", stop_reason="cancelled by the user"))
    return "green loop cancelled"
