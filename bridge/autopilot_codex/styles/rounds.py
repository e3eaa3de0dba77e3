"""The rounds style: the loop a `run` holds while its driver starts a fresh host per round.

The driver decides everything (markers, the verifier's git check, retries, the wrap-up); the
hooks of a round only get the rails, which `hookrun` applies before any style. So a round's
Stop is never blocked, and nothing else is recorded: ending the round is the driver's signal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..hookio import ALLOW, Answer
from ..state import State, StyleRecord

if TYPE_CHECKING:
    from ..store import Store
    from .context import HookContext


@dataclass(frozen=True)
class RoundsRecord(StyleRecord, style="rounds"):
    """A rounds run's own record: which run of the driver holds the loop (its rollout and
    markers are named by it). Its cap and the driver's id are the envelope's."""

    run_id: str = ""

    # The run's cap is its rollout's (`rounds.caps`), not the envelope's.
    envelope_budget: ClassVar[bool] = False


# A run goes on with its driver, not with `resume`.
STARTED_BY = "run <goal>"
RESUMED_BY = "run --resume"
ENDED_BY = "stop"


def cancel(store: Store, state: State) -> None:
    """A run is ended by its driver (Ctrl-C), not cancelled."""


def handle(ctx: HookContext) -> Answer:
    if ctx.payload.event == "SessionStart":
        # The driver compares before each round too; a session started by hand in the
        # worktree meanwhile is held the same way.
        from ..hosts import hostfiles

        return hostfiles.session_start(ctx.store, ctx.payload.source) or ALLOW
    return ALLOW


def status_text(state: State, store: Store, entry: Callable[[str], str]) -> str:
    """What `status` shows of a run: its meters from the rollout, and who holds the loop."""
    from .. import contract
    from ..errors import BridgeError
    from ..meters import clock
    from ..rounds import caps
    from ..rounds import rollout as rounds_rollout

    rollout = store.dir / "rounds" / "rollout.jsonl"
    try:
        log = rounds_rollout.last_run(rollout)
    except BridgeError:
        log = None  # `run --resume` says what is wrong with it
    meters_ = caps.status_lines(log, clock()) if log is not None else []
    if state.status == "running":
        held = f"Held by the run's driver; see {rollout}."
    elif state.status in ("done", "aborted"):
        held = f"Ended; see {rollout}. Next: a new goal with `autopilot-codex run <goal>`."
    else:  # interrupted (Ctrl-C), stopped or at a cap: the driver is gone, the run can go on
        held = f"Not running; see {rollout}."
        if not any(line.startswith("Next:") for line in meters_):
            held += " Next: `autopilot-codex run --resume`."
    return "\n".join(
        [
            f"autopilot-codex: rounds run {state.status} — {contract.clip(state.goal, 200)}",
            *meters_,
            f"{held} State: {store.state_path}",
        ]
    )


