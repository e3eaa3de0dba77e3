"""The loop's manager calls in flight: the single slot (`State.inflight`) of reviews and
verdicts, and the reservations (`State.reservations`) of calls made beside it (`ask`); taken,
reserved, settled and reclaimed, always under the store lock.

One slot for reviews and verdicts alike keeps the seed's rules exact under parallel hooks: a
burst of edits starts one review, parallel Stops make one verdict call. Every budget guard
counts the slot's and the reservations' worst cases (`caps.reserved`), so no interleaving of
calls can spend past the budget.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ...guards import charge
from ...state import Inflight, Reservation, State

if TYPE_CHECKING:
    from ...store import Store

# Beyond the manager's own timeout: git, the prompt and the state writes around the call.
SLACK_S = 30.0


def new_token() -> str:
    # Not `secrets`: its import (random, hashlib) would cost every hook; nothing is guarded
    # by this value but the identity of the slot's holder.
    return os.urandom(8).hex()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """An exited worker whose parent has not reaped it yet (a long-lived parent, such as a
    test run, starting hooks in-process) is gone for our purposes."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"


def is_stale(slot: Inflight, generation: int, now: float) -> bool:
    return slot.generation != generation or now > slot.deadline or not pid_alive(slot.pid)


def reclaim(state: State, now: float) -> tuple[State, Inflight | None]:
    """Clear a stale slot and charge its reservation: the call may have been paid for, and
    the budget guard's worst case must hold even for a caller that died. Stale reservations
    go the same way."""
    state, _ = reclaim_reservations(state, now)
    slot = state.inflight
    if slot is None or not is_stale(slot, state.generation, now):
        return state, None
    return charge(state, slot.reserved_usd).evolve(inflight=None), slot


# -- reservations beside the slot ----------------------------------------------------------


def process_start(pid: int) -> str:
    """When the process started, in clock ticks since boot ("" where /proc cannot tell): with
    the pid, it names one process, never a later one that reuses the pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return ""
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else ""


def reservation_stale(held: Reservation, now: float) -> bool:
    if now > held.deadline or not pid_alive(held.pid):
        return True
    return bool(held.start) and process_start(held.pid) not in ("", held.start)


def reserve_call(
    state: State, usd: float, *, pid: int, token: str, now: float, timeout_s: float
) -> State:
    held = Reservation(
        token=token, pid=pid, usd=usd, deadline=now + timeout_s + SLACK_S, start=process_start(pid)
    )
    return state.evolve(reservations=[*state.reservations, held])


def release_call(state: State, token: str) -> tuple[State, Reservation | None]:
    """The state without this reservation (the caller charges what the call cost)."""
    mine = next((r for r in state.reservations if r.token == token), None)
    if mine is None:
        return state, None
    return state.evolve(reservations=[r for r in state.reservations if r.token != token]), mine


def reclaim_reservations(state: State, now: float) -> tuple[State, list[Reservation]]:
    """Drop the reservations of callers that died or overran, charging their worst case."""
    stale = [r for r in state.reservations if reservation_stale(r, now)]
    if not stale:
        return state, []
    live = [r for r in state.reservations if r not in stale]
    state = charge(state, sum(r.usd for r in stale)).evolve(reservations=live)
    return state, stale


def take(
    state: State,
    kind: str,
    *,
    pid: int,
    token: str,
    now: float,
    timeout_s: float,
    reserved_usd: float = 0.0,
) -> State | None:
    """The state with the slot taken (with the worst case of the call it is taken for), or
    None when a live caller holds it."""
    state, _ = reclaim(state, now)
    if state.inflight is not None:
        return None
    slot = Inflight(
        kind="review" if kind == "review" else "stop",
        token=token,
        pid=pid,
        generation=state.generation,
        started_at=now,
        deadline=now + timeout_s + SLACK_S,
        reserved_usd=reserved_usd,
    )
    return state.evolve(inflight=slot)


def holds(state: State, token: str) -> bool:
    return state.inflight is not None and state.inflight.token == token


def reserve(state: State, token: str, usd: float, digest: str = "") -> State:
    """Record the worst case of the call about to be made, charged if its caller dies."""
    if not holds(state, token) or state.inflight is None:
        return state
    slot = state.inflight.evolve(reserved_usd=usd, digest=digest or state.inflight.digest)
    return state.evolve(inflight=slot)


def supersede(state: State) -> tuple[State, Inflight | None]:
    """Take the slot from a review whose answer no longer matters (its diff changed since):
    its worker sees the slot gone and leaves; its worst case is charged, as for a crash."""
    slot = state.inflight
    if slot is None:
        return state, None
    return charge(state, slot.reserved_usd).evolve(inflight=None), slot


def settle(state: State, token: str) -> State:
    """The call came back and its real cost was charged: the reservation goes."""
    return reserve(state, token, 0.0)


def release(state: State, token: str) -> State:
    return state.evolve(inflight=None) if holds(state, token) else state


def clock() -> float:
    return time.time()


def reclaimed(store: Store, session: str | None, state: State, now: float) -> State:
    """The loop with the manager calls of dead or overdue processes taken back and charged at
    their worst case: `ask` reservations and the review/verdict slot, each logged."""
    state, gone = reclaim_reservations(state, now)
    for held in gone:
        store.append_event(
            "ask.reclaimed", pid=held.pid, charged_usd=round(held.usd, 6), session=session
        )
    state, stale = reclaim(state, now)
    if stale is not None:
        store.append_event(
            "inflight.reclaimed",
            kind=stale.kind,
            pid=stale.pid,
            charged_usd=round(stale.reserved_usd, 6),
            session=session,
        )
    return state
