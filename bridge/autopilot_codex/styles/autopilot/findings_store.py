"""The finding ledger's file, `findings.json` beside the loop's state: read and written only
under the store's lock, atomically, and scoped to one loop (a new plan starts it afresh)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ... import gitrepo, surrogates
from .findings import Ledger, in_generation
from .record import of, position_of, task_of

if TYPE_CHECKING:
    from ...guards import Step
    from ...manager.prompts import Prompt
    from ...manager.schemas import Review
    from ...state import State
    from ...store import Store
    from ..context import HookContext
    from .convergence import Rules

NAME = "findings.json"


SUM = "findings.json.sum"


def loop_key(store: Store, state: State) -> str:
    """Which loop a ledger belongs to: its goal, where it began and its plan file (written
    once per plan, so a new plan starts a new ledger and a resume keeps it)."""
    try:
        plan = hashlib.sha256(store.plan_path.read_bytes()).hexdigest()
    except OSError:
        plan = ""
    text = f"{state.base_sha}\0{state.goal}\0{plan}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def load(store: Store, state: State) -> Ledger:
    """The loop's ledger; an empty one when there is none, it is another loop's, or it does
    not parse. A ledger that is not what the bridge last wrote is set aside too (an event
    says so): only the ledger can stop a finding's delivery (as disputed), so a forged one
    must never be read, and a fresh one only makes the manager's findings heard again."""
    read = _checked(store)
    if read is None:
        store.append_event("findings.tampered", decision="set_aside", file=NAME)
        _set_aside(store.dir / NAME)
        return Ledger()
    return _parsed(read, store, state)


def _checked(store: Store) -> str | None:
    """The ledger's text ("" when there is none), None when the bridge did not write it."""
    try:
        text = (store.dir / NAME).read_text(encoding="utf-8")
    except OSError:
        return ""
    return text if _digest(text) == _read(store.dir / SUM) else None


def _parsed(text: str, store: Store, state: State) -> Ledger:
    if not text:
        return Ledger()
    try:
        if surrogates.loads(text).get("loop") != loop_key(store, state):
            return Ledger()
        return in_generation(Ledger.from_json(text), state.generation)
    except (ValueError, TypeError, AttributeError, KeyError):
        return Ledger()


def save(store: Store, state: State, ledger: Ledger) -> None:
    """The ledger's digest first, then the ledger (the plan's way with its witness)."""
    for name, text in files(store, state, ledger):
        store.write_beside(name, text)


def files(store: Store, state: State, ledger: Ledger) -> list[tuple[str, str]]:
    """What `save` writes beside the state, in order: the digest, then the ledger."""
    data = dataclasses.asdict(ledger)
    data["loop"] = loop_key(store, state)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    return [(SUM, _digest(text) + "\n"), (NAME, text)]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _set_aside(path: Path) -> None:
    """Keep the changed file for the user, out of the way of the next save."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        os.replace(path, path.with_name(f"{path.name}.changed-{os.getpid()}"))


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
    rules: Rules,
    background: bool = False,
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
        rules=rules,
        changed_files=changed_files,
        can_end=not background,
    )
    if after != ledger:
        save(store, state, after)
    return convergence.count_turn(state, decision, at_stop, head), decision


def view_lines(store: Store, state: State, task: str | None = None) -> list[str]:
    """`status` and `next`: the standing findings with their ages, and the advisory ones
    raised more than once, or nothing."""
    from .findings import advisory_lines, listing

    # Without the lock (a read-only command): a ledger mid-write is only not shown.
    text = _checked(store)
    if text is None:
        return [
            "Review findings: the ledger was changed outside the bridge (set aside at the next review)."
        ]
    ledger = _parsed(text, store, state)
    lines = listing(ledger, task)
    scope = f"task {task}" if task else "this loop"
    shown = [f"Open review findings ({scope}):", *(f"  {line}" for line in lines)] if lines else []
    repeated = advisory_lines(ledger)
    if repeated:
        # Each restatement is a review that changed nothing: it counts towards the pause.
        shown.append(f"Advisory findings raised again ({len(repeated)}, not delivered):")
        shown += [f"  {line}" for line in repeated]
    return shown


def review_prompt(
    ctx: HookContext, state: State, diff_text: str, files: Sequence[str] = ()
) -> Prompt:
    from ...manager import prompts

    return prompts.review_prompt(
        state.goal,
        state.plan,
        task_of(state),
        position_of(state),
        diff_text,
        ctx.config.prompt_chars,
        ledger=findings_prompt(ctx, state, files),
    )


def findings_prompt(ctx: HookContext, state: State, files: Sequence[str]) -> str:
    """The task's standing findings, and what earlier tasks changed (context, not subject)."""
    from ...manager.prompts import ledger_text
    from .findings import standing_lines

    ledger = load(ctx.store, state)
    others: list[str] = []
    if state.base_sha != of(state).task_base_sha:
        loop = gitrepo.changed_names(
            ctx.store.worktree, state.base_sha, exclude=ctx.store.excluded()
        )
        others = [f for f in loop if f not in set(files)]
    lines, repeated = standing_lines(ledger, of(state).current_task or "wrap-up")
    return ledger_text(lines, others, repeated)
