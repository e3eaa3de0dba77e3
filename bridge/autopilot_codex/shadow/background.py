"""Snapshots off the hook's critical path: the hook takes the shadow's lock, starts a detached
worker that inherits it, and answers at once; the worker snapshots and lets go by exiting.

Because the lock is taken before the hook answers, whatever comes next and must see the
snapshot (the next tool call that can change files, a Stop, `restore`) waits on that lock
(`repo.settle`), however soon it comes: no command runs over a tree not yet kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import detached
from . import repo

if TYPE_CHECKING:
    from ..store import Store

MODULE = "autopilot_codex.shadow.background"


def spawn(store: Store, point: str, paths: Sequence[str] | None, *, notice: bool = True) -> None:
    """Start the snapshot; raises (BridgeError, OSError) when the lock or the start fails."""
    shadow = repo.at(store.worktree, store.home)
    fd = repo.hold(shadow, store.lock_timeout)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        job = json.dumps(
            {
                "worktree": str(store.worktree),
                "home": str(store.home),
                "point": point,
                "paths": None if paths is None else list(paths),
                "fd": fd,
                "notice": notice,
            }
        )
        # The lock's descriptor is the one the worker inherits (`detached`), at its number.
        os.set_inheritable(fd, True)
        pid = detached.start(MODULE, [job], env, keep=(fd,))
    finally:
        # The worker's copy of the descriptor keeps the lock until it exits.
        os.close(fd)
    detached.reap(pid)


def main(argv: list[str]) -> int:
    from ..store import Store
    from .record import at_point

    job = json.loads(argv[0])
    store = Store(Path(job["worktree"]), home=Path(job["home"]))
    try:
        at_point(store, job["point"], paths=job["paths"], notice=job["notice"], held=True)
    except Exception:  # noqa: BLE001 - logged by at_point; a worker has no one to tell
        return 1
    finally:
        os.close(int(job["fd"]))
    return 0
