"""The finding ledger's file, `findings.json` beside the loop's state: read and written only
under the store's lock, atomically, and scoped to one loop (a new plan starts it afresh)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .findings import Ledger

if TYPE_CHECKING:
    from ...guards import Step
    from ...manager.schemas import Review
    from ...state import State
    from ...store import Store

NAME = "findings.json"


def loop_key(state: State) -> str:
    """Which loop a ledger belongs to: its goal and where it began."""
    return hashlib.sha256(f"{state.base_sha}\0{state.goal}".encode()).hexdigest()[:16]


def load(store: Store, state: State) -> Ledger:
    """The loop's ledger; an empty one when there is none, it is another loop's, or it does
    not parse (the ledger is a memory for the prompts, never a reason to let work through)."""
    try:
        text = (store.dir / NAME).read_text(encoding="utf-8")
        if json.loads(text).get("loop") != loop_key(state):
            return Ledger()
        return Ledger.from_json(text)
    except (OSError, ValueError, TypeError, AttributeError):
        return Ledger()


def save(store: Store, state: State, ledger: Ledger) -> None:
    from ...store import _atomic_write

    data = dataclasses.asdict(ledger)
    data["loop"] = loop_key(state)
    _atomic_write(store.dir / NAME, json.dumps(data, indent=1, sort_keys=True))


def judged(
    store: Store,
    step: Step,
    review: Review | None,
    *,
    diff_key: str,
    now: str,
    changed_files: Sequence[str],
    at_stop: bool,
    head: str | None,
) -> Step:
    """A reduced review with the loop's ledger applied (read and written here, under the
    caller's lock), then counted as a turn if it answers a Stop with a block."""
    from . import convergence

    state, decision = step
    ledger = load(store, state)
    state, decision, after = convergence.judge(
        state,
        decision,
        review,
        ledger,
        diff_key=diff_key,
        now=now,
        rules=convergence.rules(),
        changed_files=changed_files,
    )
    if after != ledger:
        save(store, state, after)
    return convergence.count_turn(state, decision, at_stop, head), decision


def view_lines(store: Store, state: State, task: str | None = None) -> list[str]:
    """`status` and `next`: the standing findings with their ages, or nothing."""
    from .findings import listing

    ledger = load(store, state)
    lines = listing(ledger, task)
    if not lines:
        return []
    scope = f"task {task}" if task else "this loop"
    return [f"Open review findings ({scope}):", *(f"  {line}" for line in lines)]
