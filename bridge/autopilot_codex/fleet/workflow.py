"""A fleet run as a DBOS workflow, taken from the runs queue by whichever worker is free.

Three steps, each checkpointed in the shared database: a recovered run (its worker killed and
started again with the same executor id) skips the steps that finished and runs the cut one
again.

1. `prepare`: the clone in this worker's workspace (`workspace.prepare`).
2. `drive`: the lanes in that clone, as `autopilot-codex run --lanes N` in a child process (the
   same driver as a local run: its lanes walled, its merge queue one landing at a time); a
   clone holding an unfinished lanes run is resumed (`run --resume`), which re-attaches to lanes
   still running and resumes those that died. The branches are pushed every `push_every_s`
   while it drives, so a dead machine's work is on the remote.
3. `push`: the branches once more, at the end.

The child gets neither the shared database's URL nor anything new: its environment is the
worker's without `AUTOPILOT_CODEX_DATABASE_URL`, plus a SQLite file of the run's own folder as
its durable database; a round's host and a check get even less (`cleanenv`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dbos import DBOS

from .. import output
from ..durable.app import DATABASE_URL_ENV
from ..errors import BridgeError
from ..lanes.driver import home_of
from ..lanes.outcome import EXIT_CODES, result
from ..lanes.record import load
from ..lanes.record import path as record_path
from . import workspace
from .spec import WORKFLOW, RunSpec

DRIVE_LOG = "drive.log"
# A lanes run in one of these states has ended; another (running, interrupted) is resumed.
FINAL = ("complete", "incomplete", "budget")


@dataclass(frozen=True)
class Worker:
    """This process's worker: set by `worker` before DBOS launches, read by the steps."""

    executor_id: str
    lanes: int = 2
    push_every_s: float = 60.0


_worker: list[Worker] = []
# The runs this process drives, and whether the worker is stopping: a run it interrupts is not
# finished, so its step never completes and its workflow stays pending for the next start.
_children: set[subprocess.Popen[bytes]] = set()
_children_lock = threading.Lock()
_stopping = threading.Event()


def serve_as(worker: Worker) -> None:
    _worker[:] = [worker]


def this_worker() -> Worker:
    if not _worker:
        raise BridgeError("a fleet run runs only in `autopilot-codex worker`")
    return _worker[0]


def child_env(space: workspace.Workspace) -> dict[str, str]:
    """The worker's environment for its children: the shared database's URL replaced by the
    run's own SQLite file (in the worker's private folder)."""
    env = {k: v for k, v in os.environ.items() if k != DATABASE_URL_ENV}
    env[DATABASE_URL_ENV] = f"sqlite:///{space.private / 'durable.sqlite'}"
    return env


def _space(run: RunSpec) -> workspace.Workspace:
    return workspace.of(this_worker().executor_id, run.fleet_id)


@DBOS.step(name="autopilot-codex.fleet.prepare")
def prepare(spec: dict[str, Any]) -> str:
    run = RunSpec.read(spec)
    space = _space(run)
    return str(workspace.prepare(space, run.repo_url, run.fleet_id, child_env(space)))


@DBOS.step(name="autopilot-codex.fleet.drive")
def drive(spec: dict[str, Any], recorded: str) -> dict[str, Any]:
    """`recorded`: the clone the prepare step made, perhaps on a worker since dead (a run
    taken over, `worker --take-over`); this worker drives in its own, made here if need be."""
    run, worker = RunSpec.read(spec), this_worker()
    space = _space(run)
    place = space.private
    env = child_env(space)
    clone = str(workspace.prepare(space, run.repo_url, run.fleet_id, env))
    state_dir = home_of(Path(clone))
    last = load(state_dir)
    if last is not None and last.status in FINAL:
        # The run ended and its worker died before the step was recorded: the clone is this
        # fleet run's alone, so its ended run is the result; nothing is run again.
        return {
            "record": result(last, record_path(state_dir)),
            "resumed": True,
            "exit_code": EXIT_CODES[last.status],
        }
    resumed = last is not None
    words = ["--resume"] if resumed else run.run_argv(worker.lanes)
    argv = [sys.executable, "-m", "autopilot_codex", "run", *words, "--cwd", clone, "--json"]
    stop = threading.Event()
    pusher = threading.Thread(
        target=_push_until, args=(stop, space, run, env, worker.push_every_s), daemon=True
    )
    pusher.start()
    try:
        code, out = _run_child(argv, clone, env, place / DRIVE_LOG)
    finally:
        stop.set()
        pusher.join()
    if _stopping.is_set():
        # Interrupted by the worker's stop: never recorded as done (the process ends under
        # this wait), so the next start with this executor id recovers the run.
        threading.Event().wait()
    try:
        record: dict[str, Any] = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        raise BridgeError(
            f"the run ended ({code}) without its record: {_last_line(place / DRIVE_LOG)} "
            f"(its log: {place / DRIVE_LOG})"
        ) from None
    return {"record": record, "resumed": resumed, "exit_code": code}


def _last_line(log: Path) -> str:
    """A run refused before it began says why in its last line."""
    with log.open("rb") as f:
        f.seek(max(0, log.stat().st_size - 4096))
        lines = f.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "it said nothing"


def _run_child(argv: list[str], cwd: str, env: dict[str, str], log_path: Path) -> tuple[int, bytes]:
    """The run's driver, in the worker's process group: a machine going down takes it along
    (its lanes are groups of their own, which `run --resume` finds again)."""
    with log_path.open("ab") as log, _children_lock:
        if _stopping.is_set():
            raise BridgeError("the worker is stopping")
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=log)
        _children.add(child)
    try:
        out, _ = child.communicate()
    finally:
        with _children_lock:
            _children.discard(child)
    return child.returncode, out


def stop_runs(grace_s: float) -> int:
    """Interrupt every run this worker drives (each interrupts its lanes and records where it
    stood), wait up to `grace_s` for them, kill what is left; the count of runs interrupted."""
    with _children_lock:
        _stopping.set()
        running = list(_children)
    for child in running:
        with contextlib.suppress(OSError):
            child.send_signal(signal.SIGINT)
    for child in running:
        try:
            child.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            child.kill()
    return len(running)


def _push_until(
    stop: threading.Event,
    space: workspace.Workspace,
    run: RunSpec,
    env: dict[str, str],
    every_s: float,
) -> None:
    while not stop.wait(every_s):
        try:
            workspace.push(space, run.repo_url, run.fleet_id, env)
        except (BridgeError, OSError, subprocess.SubprocessError):
            continue  # the final push says what is wrong; the drive goes on


@DBOS.step(name="autopilot-codex.fleet.push")
def push(spec: dict[str, Any], recorded: str) -> dict[str, str]:
    run = RunSpec.read(spec)
    space = _space(run)
    return workspace.push(space, run.repo_url, run.fleet_id, child_env(space))


@DBOS.workflow(name=WORKFLOW)
def fleet_run(spec: dict[str, Any]) -> dict[str, Any]:
    run, executor = RunSpec.read(spec), this_worker().executor_id
    output.err(f"worker {executor}: run {run.fleet_id} ({run.repo_url}: {run.goal})")
    clone = prepare(spec)
    driven = drive(spec, clone)
    pushed = push(spec, clone)
    record = driven["record"]
    output.err(f"worker {executor}: run {run.fleet_id} ended {record.get('status', '')}")
    return {
        "status": record.get("status", ""),
        "why": record.get("why", ""),
        "tasks": {t["id"]: t["state"] for t in record.get("tasks", [])},
        "run": record.get("run", ""),
        "exit_code": driven["exit_code"],
        "resumed": driven["resumed"],
        "executor": executor,
        "pushed": pushed,
    }
