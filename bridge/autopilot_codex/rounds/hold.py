"""The loop a run holds in the bridge's store while its rounds run.

Its style is `rounds` and its owner the driver, so the gate admits every round's fresh session:
each gets the rails (PreToolUse), and the style lets every Stop through. The hold is released
however the run ends — complete, out of rounds, Ctrl-C or a crash — so no marker outlives it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import gitrepo
from ..errors import BridgeError, StateCorrupt
from ..paths import find_worktree
from ..state import State, Status, planless
from ..store import Store
from ..styles import a_loop
from ..styles.rounds import RoundsRecord

# How each of the driver's endings leaves the held loop.
END_STATUS: dict[str, Status] = {
    "complete": "done",
    "round_limit": "stopped_iteration_limit",
    "budget": "stopped_budget",
    "tokens": "stopped_tokens",
    "duration": "stopped_duration",
    "error": "aborted",
    "interrupted": "stopped",
    "no_progress": "paused",
    "tampered": "stopped",
}


DRIVER_PREFIX = "driver-pid:"


def _orphaned(state: State) -> bool:
    """A rounds loop whose driver process no longer exists (on this machine)."""
    sid = state.session_id or ""
    if not isinstance(state.own, RoundsRecord) or not sid.startswith(DRIVER_PREFIX):
        return False
    try:
        return not alive(int(sid.removeprefix(DRIVER_PREFIX)))
    except ValueError:
        return False


def alive(pid: int) -> bool:
    """Whether a process runs: a zombie (ended, its parent killed and nobody reaping it, as
    with a lane whose lanes driver was killed) has ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    fields = stat_fields(pid)
    return fields is None or fields[0] != "Z"


def stat_fields(pid: int) -> list[str] | None:
    """`/proc/<pid>/stat` from its third field on (the state first); None where it cannot be
    read (the process is gone, or no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Its name (field 2) may hold spaces and parentheses: the fields after the last ")".
    return stat.rsplit(")", 1)[-1].split()


@dataclass
class Held:
    """Set by the driver before the hold is released: how the run ended, and why."""

    status: str = "error"
    why: str = "the run ended without saying how"


def store_for(root: Path) -> Store:
    # The gate finds a loop by the worktree it resolves from a hook's cwd: use the same one.
    return Store(find_worktree(root) or root)


def refuse_if_running(root: Path) -> None:
    store = store_for(root)
    with store.locked():
        _check_free(store)


def _check_free(store: Store) -> State | None:
    try:
        current = store.load(with_plan=False)
    except StateCorrupt:
        return None
    if current is not None and current.status == "running" and _orphaned(current):
        # Its driver was killed outright (no finally ran): release it rather than refuse forever.
        current = store.save(current.evolve(status="aborted", stop_reason="its driver is gone"))
        store.append_event("rounds.orphaned", decision="aborted", driver=current.session_id)
    if current is not None and current.status == "running":
        raise BridgeError(
            f"{a_loop(current.style)} is already running in this worktree; end it before a run"
        )
    return current


@contextlib.contextmanager
def hold(
    root: Path, goal: str, run_id: str, rounds: int, wall: tuple[str, Sequence[str]] = ("", ())
) -> Iterator[Held]:
    """Hold a driver-owned loop for the run; `wall` is the (level, missing pieces) `run` judged
    its rounds to run behind."""
    store = store_for(root)
    with store.locked():
        previous = _check_free(store)
        head = gitrepo.head_sha(root)
        state = planless(
            goal=goal,
            worktree=str(store.worktree),
            head=head,
            style="rounds",
            owner="driver",
            # Not a host session (the driver policy ignores it): the driver's process, so a loop
            # whose driver was killed can be told from one that is still running.
            session_id=f"{DRIVER_PREFIX}{os.getpid()}",
            max_iterations=rounds,
            generation=(previous.generation + 1) if previous else 1,
            own=RoundsRecord(run_id=run_id),
        ).evolve(wall=wall[0], wall_missing=list(wall[1]))
        store.save_plan(state.plan)
        store.save(state)
        store.append_event("rounds.start", decision="running", run=run_id)
    held = Held()
    try:
        yield held
    except BaseException as exc:
        held.status, held.why = "error", f"the run crashed ({type(exc).__name__})"
        if isinstance(exc, KeyboardInterrupt):
            held.status, held.why = "interrupted", "interrupted"
        raise
    finally:
        _release(store, run_id, held)


def _release(store: Store, run_id: str, held: Held) -> None:
    with store.locked():
        try:
            state = store.load(with_plan=False)
        except StateCorrupt:
            state = None
        if state is not None and isinstance(state.own, RoundsRecord) and state.status == "running":
            status = END_STATUS.get(held.status, "aborted")
            store.save(state.evolve(status=status, stop_reason=held.why))
        elif state is None:
            # The state went missing under the run: its marker must not outlive the run.
            with contextlib.suppress(FileNotFoundError):
                store.marker.unlink()
        store.append_event("rounds.end", decision=held.status, run=run_id, reason=held.why)
