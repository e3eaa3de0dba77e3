"""`submit` and `worker`: many runs on many machines over one shared database (docs/scaling.md).

Both refuse to start without `AUTOPILOT_CODEX_DATABASE_URL`: a fleet's machines meet only in
a shared database, and a SQLite file under one machine's state home is no such place.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import socket
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import output
from ..durable.app import DATABASE_URL_ENV
from ..errors import BridgeError, LockTimeout
from ..fileio import release
from ..paths import state_home

if TYPE_CHECKING:
    from ..fleet.spec import RunSpec
    from . import Verb

NO_DATABASE = (
    f"a fleet needs a database every machine reaches: set {DATABASE_URL_ENV}="
    "postgresql://user:password@host/db (see docs/scaling.md)"
)


def add_parsers(sub: Any) -> None:
    submit = sub.add_parser(
        "submit",
        help="put a run on the fleet's queue (needs AUTOPILOT_CODEX_DATABASE_URL)",
        description='submit <repo-url> "<goal>" [run options]: the options are `run`\'s '
        "(--implementer, --manager, --lanes, --budget, --check, ...).",
    )
    submit.add_argument("repo_url", metavar="repo-url", help="the repository every worker clones")
    submit.add_argument("words", nargs=argparse.REMAINDER, help="the goal and `run`'s options")

    worker = sub.add_parser(
        "worker", help="take runs from the fleet's queue and run them here (Ctrl-C stops)"
    )
    worker.add_argument(
        "--lanes", type=int, default=2, metavar="N", help="lanes at once per run here (default 2)"
    )
    worker.add_argument(
        "--runs", type=int, default=1, metavar="M", help="runs at once on this worker (default 1)"
    )
    worker.add_argument(
        "--executor-id",
        default=None,
        metavar="ID",
        help="this worker's name in the database (default: the host name); a worker started "
        "again with the same id recovers the runs it had",
    )
    worker.add_argument(
        "--take-over",
        default=None,
        metavar="ID",
        help="first put back on the queue the runs of a worker that will not come back (its "
        "executor id): they go on from the branches it pushed",
    )
    worker.add_argument(
        "--push-every",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds between pushes of a driving run's branches (default 60)",
    )


# How long a stopping worker waits for its runs to record where they stood.
STOP_GRACE_S = 120.0


def database() -> str:
    url = os.environ.get(DATABASE_URL_ENV, "").strip()
    if not url:
        raise BridgeError(NO_DATABASE)
    if url.startswith("sqlite"):
        raise BridgeError(
            f"{DATABASE_URL_ENV} names a SQLite file, which one machine holds: {NO_DATABASE}"
        )
    return url


def shown(url: str) -> str:
    """The database without its password, for messages."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


def parse(repo_url: str, words: list[str]) -> RunSpec:
    """The run as `run` itself reads `words`; refused here when it would be refused there."""
    from ..fleet.spec import WORKER_OWNED, RunSpec, repository
    from .run import parser

    for word in words:
        if word.split("=", 1)[0] in WORKER_OWNED:
            raise BridgeError(f"{word}: a worker sets where the run is and how it reports")
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args = parser().parse_args(words)
    except SystemExit:
        raise BridgeError(said.getvalue().strip() or "the run's options are not accepted") from None
    goal = " ".join(args.goal).strip()
    if not goal:
        raise BridgeError('submit needs a goal: submit <repo-url> "<goal>" --implementer claude')
    if args.implementer is None:
        raise BridgeError("choose the implementer: --implementer claude or --implementer codex")
    if args.manager in (None, "none"):
        raise BridgeError("a fleet run has lanes, which need a manager: --manager openai or codex")
    if args.lanes is not None and args.lanes < 1:
        raise BridgeError("--lanes must be 1 or more")
    return RunSpec(repo_url=repository(repo_url), args=tuple(words), goal=goal, lanes=args.lanes)


def client(url: str) -> Any:
    """A DBOS client of the fleet's database, or one line saying it cannot be reached (never
    a wait: a worker or a submit started against a wrong URL says so at once)."""
    from dbos import DBOSClient
    from sqlalchemy.exc import SQLAlchemyError

    from ..durable.app import APP_NAME

    try:
        return DBOSClient(
            system_database_url=url, application_name=APP_NAME, retry_connection_errors=False
        )
    except SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise BridgeError(
            f"cannot reach the fleet's database {shown(url)}: {cause[0] if cause else exc}"
        ) from None


def submit(repo_url: str, words: list[str]) -> str:
    from dbos import EnqueueOptions

    from ..durable.app import APP_VERSION
    from ..fleet.spec import RUNS_QUEUE, WORKFLOW

    url = database()
    spec = parse(repo_url, words)
    db = client(url)
    try:
        # The first submit may come before any worker: the queue's tables are made here.
        db._sys_db.run_migrations()
        options: EnqueueOptions = {
            "workflow_name": WORKFLOW,
            "queue_name": RUNS_QUEUE,
            "workflow_id": spec.fleet_id,
            "app_version": APP_VERSION,
        }
        db.enqueue(options, spec.as_dict())
    finally:
        db.destroy()
    return (
        f"Submitted fleet run {spec.fleet_id} ({spec.repo_url}: {spec.goal}) to {shown(url)}. "
        "A worker takes it (autopilot-codex worker); `status` shows it."
    )


def worker(
    *,
    lanes: int,
    runs: int,
    executor_id: str | None,
    push_every_s: float,
    take_over: str | None = None,
) -> int:
    from dbos import DBOS

    from ..durable import app
    from ..fleet import workflow
    from ..fleet.spec import RUNS_QUEUE

    if lanes < 1 or runs < 1 or not push_every_s > 0:
        raise BridgeError("--lanes and --runs must be 1 or more, --push-every above 0")
    url = database()
    client(url).destroy()  # said in one line, before DBOS's launch would say it at length
    executor = (executor_id or socket.gethostname()).strip()
    if take_over is not None and take_over.strip() == executor:
        raise BridgeError("--take-over names another worker's id: a worker recovers its own runs")
    lock = _only_one(executor)
    workflow.serve_as(workflow.Worker(executor, lanes=lanes, push_every_s=push_every_s))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    app.launch(url, executor)
    DBOS.register_queue(RUNS_QUEUE, worker_concurrency=runs)
    if take_over is not None:
        output.err(
            f"worker {executor}: took over {_take_over(url, take_over.strip())} run(s) of {take_over}"
        )
    output.err(
        f"worker {executor}: taking runs from {shown(url)}, {runs} at once, {lanes} lanes each "
        "(Ctrl-C stops; a run cut short here is recovered when this id starts again)"
    )
    stop.wait()
    cut = workflow.stop_runs(STOP_GRACE_S)
    app.shutdown()
    release(lock)
    os.close(lock)
    output.err(f"worker {executor}: stopped; {cut} run(s) left for its next start")
    if cut:
        # Their steps wait under a thread that must never record them done: end here.
        os._exit(0)
    return 0


def _take_over(url: str, dead: str) -> int:
    """The dead worker's unfinished runs back on the runs queue, for any worker to take."""
    from ..fleet.spec import RUNS_QUEUE, WORKFLOW

    db = client(url)
    try:
        found = db.list_workflows(
            name=WORKFLOW, executor_id=dead, status="PENDING", load_input=False
        )
        for status in found:
            db.resume_workflow(status.workflow_id, queue_name=RUNS_QUEUE)
    finally:
        db.destroy()
    return len(found)


def _only_one(executor: str) -> int:
    """One process per executor id: two would each recover the other's runs."""
    from ..fileio import acquire
    from ..fleet.workspace import FLEET_DIR, safe_name

    place = state_home() / FLEET_DIR
    place.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(place / f"{safe_name(executor)}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        acquire(fd, 0.0)
    except LockTimeout:
        os.close(fd)
        raise BridgeError(
            f"a worker named {executor!r} already runs here; give --executor-id"
        ) from None
    return fd


def fleet_lines() -> list[str]:
    """The fleet's runs from the shared database, for `status`, `loops`, `watch` and `report`;
    nothing (and no DBOS import) without one."""
    if not os.environ.get(DATABASE_URL_ENV, "").strip():
        return []
    from ..fleet.records import lines

    return lines()


def _submit(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    return 0, submit(args.repo_url, list(args.words))


def _worker(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    return worker(
        lanes=args.lanes,
        runs=args.runs,
        executor_id=args.executor_id,
        push_every_s=args.push_every,
        take_over=args.take_over,
    ), ""


FLEET: dict[str, Verb] = {"submit": _submit, "worker": _worker}
