"""A state.json object read as a State (`parse_state`), and the ranges of its numbers: values
no bridge writes mean the file was changed by hand or damaged, and they are refused."""

from __future__ import annotations

import dataclasses
import math

from . import defaults, typedjson
from .state import RECORDS, UNLOADED_PLAN, State, StyleRecord
from .state_file import flatten

# Counters that only the bridge moves, and only upwards from zero; a hand-edited negative
# value would hand the loop extra iterations or budget headroom.
_NON_NEGATIVE = (
    "iteration",
    "budget_used_usd",
    "idle_stop_blocks",
    "tool_events",
    "stop_events",
    "implementer_used_usd",
    "implementer_tokens",
    "max_tokens",
    "max_seconds",
)


def check_ranges(state: State, kind: type[StyleRecord] | None) -> None:
    """Refuse values no bridge writes: they mean the file was changed by hand or damaged."""
    for name in (
        "budget_usd",
        "budget_used_usd",
        "implementer_used_usd",
        "max_seconds",
        "started_epoch",
    ):
        if not math.isfinite(getattr(state, name)):
            raise typedjson.Invalid(name, "not a finite number")
    for name in _NON_NEGATIVE:
        if getattr(state, name) < 0:
            raise typedjson.Invalid(name, "negative")
    _check_held(state)
    _check_rest(state, kind)


def _check_held(state: State) -> None:
    """What calls in flight hold, and where the implementer's spend was last read."""
    reserved = state.inflight.reserved_usd if state.inflight else 0.0
    if not math.isfinite(reserved) or reserved < 0:
        raise typedjson.Invalid("inflight.reserved_usd", "not a finite non-negative number")
    if any(not math.isfinite(r.usd) or r.usd < 0 for r in state.reservations):
        raise typedjson.Invalid("reservations.usd", "not a finite non-negative number")
    if any(c.offset < 0 for c in state.spend_cursors):
        raise typedjson.Invalid("spend_cursors.offset", "negative")


def _check_rest(state: State, kind: type[StyleRecord] | None) -> None:
    # A style that may run without a dollar cap stores none as 0.
    optional = kind is not None and kind.budget_optional
    if state.budget_usd < 0 or (state.budget_usd == 0 and not optional):
        raise typedjson.Invalid("budget_usd", "not positive")
    if state.max_iterations < 0:
        raise typedjson.Invalid("max_iterations", "negative")
    if state.own is not None:
        state.own.check()
        # A style may count the iteration now running (ralph): never fewer than none ended.
        if state.own.ended(state.iteration) < 0:
            raise typedjson.Invalid("iteration", "out of range")


def parse_state(data: object) -> State:
    """A state.json object as a State whose plan is not loaded; raises typedjson.Invalid."""
    own, kind = None, None
    if isinstance(data, dict):
        data, raw = flatten(data, RECORDS)
        style = data.get("style", defaults.STYLE)
        kind = RECORDS.get(style)
        if raw is None and kind is not None and kind.required:
            raise typedjson.Invalid(style, "missing")
        if raw is not None:
            if kind is None:
                raise typedjson.Invalid(style, f"a {style} loop keeps no record of its own")
            own = typedjson.load(kind, raw, style)
            misplaced = data.keys() & {f.name for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
            if misplaced:
                raise typedjson.Invalid(min(misplaced), f"belongs in the {style} record")
        data["plan"] = {"summary": "", "tasks": []}
    state = typedjson.load(State, data).evolve(plan=UNLOADED_PLAN, own=own)
    check_ranges(state, kind)
    return state
