"""The fleet's runs as the shared database holds them, for `status`, `loops`, `watch` and
`report`: read with a DBOS client (no workflow runs here, nothing is launched)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..durable.app import APP_NAME, DATABASE_URL_ENV
from .spec import WORKFLOW

SHOWN = 20


@dataclass(frozen=True)
class FleetRun:
    fleet_id: str
    status: str  # DBOS's: ENQUEUED, PENDING, SUCCESS, ERROR, CANCELLED, …
    executor: str
    repo_url: str
    goal: str
    result: dict[str, Any]
    created_ms: int

    def line(self) -> str:
        where = f" on {self.executor}" if self.executor and self.status != "ENQUEUED" else ""
        outcome = ""
        if self.result:
            tasks = self.result.get("tasks") or {}
            merged = sum(1 for s in tasks.values() if s == "merged")
            outcome = f": {self.result.get('status', '')}, {merged}/{len(tasks)} merged"
        return f"  {self.fleet_id} {self.status.lower()}{where}{outcome} · {self.repo_url} · {self.goal[:60]}"


def configured() -> str:
    return os.environ.get(DATABASE_URL_ENV, "").strip()


def runs(url: str, limit: int = SHOWN) -> list[FleetRun]:
    """The latest fleet runs, newest first."""
    from dbos import DBOSClient

    # A database that cannot be reached is said at once, not waited for.
    client = DBOSClient(
        system_database_url=url, application_name=APP_NAME, retry_connection_errors=False
    )
    try:
        found = client.list_workflows(name=WORKFLOW, sort_desc=True, limit=limit)
    finally:
        client.destroy()
    return [_read(s) for s in found]


def _read(status: Any) -> FleetRun:
    args: tuple[Any, ...] = tuple((status.input or {}).get("args") or ({},))
    spec = args[0] if args and isinstance(args[0], dict) else {}
    result = status.output if isinstance(status.output, dict) else {}
    return FleetRun(
        fleet_id=str(status.workflow_id),
        status=str(status.status),
        executor=str(status.executor_id or ""),
        repo_url=str(spec.get("repo_url", "")),
        goal=str(spec.get("goal", "")),
        result=result,
        created_ms=int(status.created_at or 0),
    )


def lines() -> list[str]:
    """The fleet's section of a view: nothing without a shared database; one line when it
    cannot be read."""
    url = configured()
    if not url:
        return []
    try:
        found = runs(url)
    except Exception as exc:  # noqa: BLE001 - a view names a database it cannot read, whatever the cause
        if not _no_tables(exc):
            return [f"Fleet: the shared database cannot be read ({type(exc).__name__})."]
        found = []  # a database no submit or worker has used yet
    if not found:
        return ['Fleet: no run submitted yet (autopilot-codex submit <repo-url> "<goal>").']
    return [f"Fleet runs ({len(found)} latest):", *(r.line() for r in found)]


def _no_tables(exc: Exception) -> bool:
    """The database is there but holds no fleet yet (Postgres: no relation; SQLite: no table)."""
    text = str(exc)
    return ("relation" in text and "does not exist" in text) or "no such table" in text
