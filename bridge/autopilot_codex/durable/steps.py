"""Steps of a durable workflow, and the same code as plain calls outside one.

The lanes driver's loop runs inside a DBOS workflow (`lanes.flow`) and, in tests and tools, on
its own: `step` checkpoints a call's result only when a workflow is running on this thread and
no step is, else it just calls. It never imports DBOS itself: a process that never started a
workflow never loaded it, so a view or a hook that reaches this module pays nothing.

`AUTOPILOT_CODEX_DIE_AFTER_STEP=N` is a test seam: the process kills itself (SIGKILL, as
`kill -9` would) right after its Nth step executed here was checkpointed, so the tests can
stop a driver at every step boundary without timing anything.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")
DIE_AFTER_ENV = "AUTOPILOT_CODEX_DIE_AFTER_STEP"
_executed = [0]


def in_workflow() -> bool:
    """A workflow runs on this thread, outside any of its steps."""
    if "dbos" not in sys.modules:
        return False
    from dbos._context import get_local_dbos_context

    ctx = get_local_dbos_context()
    return bool(ctx and ctx.is_workflow())


def step(name: str, func: Callable[..., R], *args: Any) -> R:
    """`func(*args)`, as the workflow's next step when one runs: its result (or its
    exception) is recorded, and a workflow recovered after a kill gets the record back
    instead of calling again."""
    if not in_workflow():
        return func(*args)
    from dbos import DBOS

    ran: list[bool] = []

    def body() -> R:
        ran.append(True)
        return func(*args)

    result: R = DBOS.run_step({"name": name}, body)
    if ran:
        _boundary()
    return result


def publish(key: str, value: Any) -> None:
    """The workflow's latest `value` under `key`, kept in the system database (a later run
    reads it with `DBOS.get_event`); nothing outside a workflow."""
    if in_workflow():
        from dbos import DBOS

        DBOS.set_event(key, value)


def _boundary() -> None:
    _executed[0] += 1
    wanted = os.environ.get(DIE_AFTER_ENV, "")
    if wanted.isdigit() and _executed[0] == int(wanted):
        os.kill(os.getpid(), signal.SIGKILL)
