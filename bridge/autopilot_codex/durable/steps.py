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
import threading
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")
DIE_AFTER_ENV = "AUTOPILOT_CODEX_DIE_AFTER_STEP"
_executed = [0]
# Marks made by each step execution here, by (workflow, step): `begun_before` numbers them.
_marks: dict[tuple[str, int], int] = {}
_lock = threading.Lock()


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


def begun_before() -> bool:
    """Inside a step: whether an earlier execution of this very step got as far as this mark
    (its Nth, counted in each execution alike) and was cut short: a step that completed is
    never executed again. Marks it now. What a step paid for before a kill (a manager's
    call) is thereby known to have been paid. Outside a step: False."""
    if "dbos" not in sys.modules:
        return False
    from dbos import DBOS
    from dbos._context import get_local_dbos_context

    ctx = get_local_dbos_context()
    if not (ctx and ctx.is_step()):
        return False
    at = (ctx.workflow_id, ctx.curr_step_function_id)
    with _lock:
        _marks[at] = _marks.get(at, 0) + 1
        key = f"begun.{at[1]}.{_marks[at]}"
    seen = DBOS.get_event(ctx.workflow_id, key, timeout_seconds=0) is not None
    DBOS.set_event(key, True)
    return seen


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
