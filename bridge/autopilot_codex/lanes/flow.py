"""A lanes run as a DBOS workflow: what `run --lanes` and `run --resume` start and wait for.

One workflow per attempt of a run, its id derived from the run's: `lanes:<project>:<run>:<n>`.
A driver killed (`kill -9`, a crash, a reboot) leaves its attempt pending; `run --resume`
launches DBOS as the project's executor, which recovers it: the loop runs again from the top
and every step it had completed (a lane's start, a wait that saw lanes end, a landing, a
manager's answer) returns its recorded result instead of running again, so nothing merges
twice and no spend is counted twice. An attempt that ended (complete, incomplete, on its
budget, interrupted by Ctrl-C) stays ended; `run --resume` then starts the next one from the
record the last one left in the database (`record.RECORD_EVENT`), with the resume's flags.

The loop runs on DBOS's thread; this thread waits for it, and a Ctrl-C here asks the loop to
stop its lanes and end the attempt as interrupted (a second one leaves at once, as a kill).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from dbos import DBOS, SetWorkflowID

from .. import output
from ..durable import app
from ..errors import BridgeError
from ..gitrepo import toplevel
from ..paths import project_key
from .ask import for_backend
from .begin import LanesOptions, new_run_id, refuse_unfinished
from .driver import drive, home_of
from .lane import interrupted
from .record import RECORD_EVENT, load, parse, raw_of

WORKFLOW = "autopilot_codex.lanes.run"
# Workflow states that mean an attempt is still under way (its executor may recover it).
UNDER_WAY = ("PENDING", "ENQUEUED")
# Seconds between looks at the database while the loop runs on DBOS's thread.
POLL_S = 0.5

_done: dict[str, threading.Event] = {}
_outcomes: dict[str, tuple[bool, Any]] = {}
_guard = threading.Lock()


@DBOS.workflow(name=WORKFLOW)
def _attempt(opts: LanesOptions, run_id: str, last: dict[str, Any] | None) -> dict[str, Any]:
    wid = DBOS.workflow_id or ""
    try:
        resumed_from = parse(last) if last is not None else None
        found = drive(opts, for_backend(opts.manager or None), output.err, run_id=run_id,
                      last=resumed_from)  # fmt: skip
        _outcomes[wid] = (True, found)
        return found
    except BridgeError as error:
        # The user's error (a detached HEAD, a budget too small for the plan): said once by
        # the command, as before, not logged by DBOS as a crash. The attempt ends with it.
        _outcomes[wid] = (False, error)
        return {"error": str(error)}
    except BaseException as error:
        _outcomes[wid] = (False, error)
        raise
    finally:
        _event(wid).set()


def _event(wid: str) -> threading.Event:
    with _guard:
        return _done.setdefault(wid, threading.Event())


def prefix(root_key: str, run_id: str) -> str:
    return f"lanes:{root_key}:{run_id}:"


def executor(root_key: str) -> str:
    """One executor per project: launching it recovers that project's attempts, never
    another's (which may be running in another process)."""
    return f"local:{root_key}"


def run(opts: LanesOptions) -> dict[str, Any]:
    """Start (or resume) the run and wait for its attempt to end; its final record."""
    root = toplevel(opts.worktree)
    key = project_key(root)
    if not opts.resume:
        refuse_unfinished(root)
    app.launch(executor_id=executor(key))
    try:
        wid, args = _next(opts, key, home_of(root))
        interrupted.clear()
        if args is not None:
            with SetWorkflowID(wid):
                DBOS.start_workflow(_attempt, *args)
        return _wait(wid)
    finally:
        app.shutdown()


def _next(
    opts: LanesOptions, key: str, home: Path
) -> tuple[str, tuple[LanesOptions, str, dict[str, Any] | None] | None]:
    """The attempt to wait for, and its arguments when it is to be started (None: it is
    under way, recovered by this executor's launch)."""
    if not opts.resume:
        run_id = new_run_id()
        # Named by the second: a run begun in the same second as one that failed to begin.
        n = 1
        while DBOS.list_workflows(workflow_id_prefix=prefix(key, run_id), limit=1):
            n += 1
            run_id = f"{new_run_id()}-{n}"
        return prefix(key, run_id) + "1", (opts, run_id, None)
    under_way = _under_way(DBOS, key)
    if under_way is not None:
        _recoverable(under_way[0], key)
        return under_way[0], None
    last = load(home)
    if last is None or last.status == "complete":
        raise BridgeError("no unfinished lanes run to resume here")
    attempts = DBOS.list_workflows(workflow_id_prefix=prefix(key, last.run), sort_desc=True)
    if not attempts:  # a run from before runs were durable: its file is all there is
        return prefix(key, last.run) + "1", (opts, last.run, raw_of(last))
    latest = attempts[0]
    record = DBOS.get_event(latest.workflow_id, RECORD_EVENT, timeout_seconds=0)
    n = int(latest.workflow_id.rsplit(":", 1)[1]) + 1
    return prefix(key, last.run) + str(n), (opts, last.run, record or raw_of(last))


def _recoverable(wid: str, key: str) -> None:
    """An attempt this launch recovers: this project's executor's, of this version. Another
    is never waited for in vain."""
    status = DBOS.get_workflow_status(wid)
    if status is None:
        return
    found = (status.executor_id, status.app_version)
    if found != (executor(key), app.APP_VERSION):
        raise BridgeError(
            f"run {wid} is under way on executor {found[0]} (version {found[1]}), which this "
            f"resume does not recover: resume it where it runs"
        )


def pending(root: Path) -> tuple[str, LanesOptions] | None:
    """The project's attempt under way in the database (the driver died before it first wrote
    the run's file, or the file is gone): its id and its options; None when there is none.
    Read without launching DBOS, which would start recovering it here and now."""
    if not app.database_exists():
        return None
    from sqlalchemy.exc import ProgrammingError

    with app.client() as db:
        try:
            return _under_way(db, project_key(root))
        except ProgrammingError:  # a shared database no run has used yet: no DBOS tables
            return None


def _under_way(db: Any, key: str) -> tuple[str, LanesOptions] | None:
    """The latest attempt of the project's runs still pending (`db`: DBOS or a client)."""
    found = db.list_workflows(
        workflow_id_prefix=f"lanes:{key}:", status=list(UNDER_WAY), sort_desc=True
    )
    if not found:
        return None
    given = found[0].input
    args = given["args"] if given is not None else ()
    if not args or not isinstance(args[0], LanesOptions):
        return None
    return str(found[0].workflow_id), args[0]


def _wait(wid: str) -> dict[str, Any]:
    """The attempt's final record, or its error raised; a Ctrl-C stops it (see the module)."""
    done = _event(wid)
    while True:
        try:
            if done.wait(POLL_S) or _ended_elsewhere(wid):
                break
        except KeyboardInterrupt:
            if interrupted.is_set():
                os._exit(130)
            interrupted.set()
    if wid in _outcomes:
        ok, value = _outcomes.pop(wid)
        if not ok:
            raise value
        return dict(value)
    found: dict[str, Any] = dict(DBOS.retrieve_workflow(wid).get_result())
    if "error" in found:
        raise BridgeError(str(found["error"]))
    return found


def _ended_elsewhere(wid: str) -> bool:
    status = DBOS.get_workflow_status(wid)
    return status is not None and status.status not in UNDER_WAY
