"""One snapshot taken and told: what vanished goes to the ledger (`work.lost`) and into the
turn's list for the Stop. Used by the hooks' worker (`background`), the rounds driver and
`hook`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .. import surrogates
from ..errors import BridgeError
from ..fileio import atomic_write, read_text
from . import repo, snapshot

if TYPE_CHECKING:
    from ..store import Store

PENDING = "shadow-lost.json"


def at_point(
    store: Store,
    point: str,
    *,
    paths: list[str] | None = None,
    notice: bool = True,
    held: bool = False,
) -> tuple[str, ...]:
    """Snapshot now; what vanished since the snapshot before, told to the ledger and kept for
    the next Stop. A failure is logged (bridge.log) and raised: the caller says it its way."""
    shadow = repo.at(store.worktree, store.home)
    try:
        if held:
            taken = snapshot.take_held(
                shadow, point, iteration=_iteration(store), paths=paths, notice=notice
            )
        else:
            taken = snapshot.take(
                shadow,
                point,
                iteration=_iteration(store),
                paths=paths,
                timeout=store.lock_timeout,
                notice=notice,
            )
    except (BridgeError, OSError):
        from ..crashlog import log_crash

        log_crash(f"shadow snapshot at {point}")
        raise
    if not taken.lost:
        return ()
    before = taken.snapshot.meta.n - 1
    store.append_event(
        "work.lost", decision="noticed", snapshot=before, lost=list(taken.lost), at=point
    )
    lines = tuple(f"{line} (in snapshot {before})" for line in taken.lost)
    atomic_write(store.dir / PENDING, json.dumps([*read_list(store.dir / PENDING), *lines]))
    return lines


def read_list(path: Path) -> list[str]:
    try:
        data = surrogates.loads(read_text(path) or "[]")
    except ValueError:
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


def _iteration(store: Store) -> int | None:
    try:
        data = surrogates.loads(read_text(store.state_path) or "{}")
    except ValueError:
        return None
    value = data.get("iteration") if isinstance(data, dict) else None
    return value if isinstance(value, int) else None
