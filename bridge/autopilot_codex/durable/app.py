"""The one place that configures and launches DBOS for this process.

Importing it is light (DBOS loads at `launch` or `client`): `database_url` and
`database_exists` serve commands that may not need DBOS at all.

Callers import the modules that declare their workflows first (DBOS finds a workflow to recover
by its registered name), then `launch`. `launch` is idempotent for the same database and
executor; asked for another, it shuts the first down. `shutdown` leaves the registry alone, so
a later `launch` in the same process (the tests do this) still knows every workflow.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..paths import state_home

if TYPE_CHECKING:
    from dbos import DBOSClient

APP_NAME = "autopilot-codex"
DATABASE_URL_ENV = "AUTOPILOT_CODEX_DATABASE_URL"
# DBOS recovers only the workflows of its own application version, which it otherwise derives
# from a hash of the workflows' source: an upgrade between a kill and `run --resume` would then
# strand the run. One fixed version; a change that breaks replay of older runs bumps it.
APP_VERSION = "autopilot-codex-durable-1"
# DBOS's own default executor id, for callers that do not name one.
LOCAL_EXECUTOR = "local"
_SQLITE_NAME = "system.sqlite"
_SQLITE = "sqlite:///"
LISTENER_POLL_S = 0.2


@dataclass(frozen=True)
class Launched:
    url: str
    executor_id: str


_lock = threading.Lock()
_current: Launched | None = None


def database_url() -> str:
    """`AUTOPILOT_CODEX_DATABASE_URL` when set, else a SQLite file under the state home."""
    configured = os.environ.get(DATABASE_URL_ENV, "").strip()
    return configured or f"{_SQLITE}{state_home() / 'durable' / _SQLITE_NAME}"


def database_exists(url: str | None = None) -> bool:
    """Whether there may be anything to read: a SQLite file not made yet holds nothing (and is
    not made by asking); any other database is asked."""
    url = url or database_url()
    return not url.startswith(_SQLITE) or Path(url.removeprefix(_SQLITE)).exists()


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """DBOS's console log, written to whatever `sys.stderr` is when it speaks: DBOS's own
    handler keeps the stream of its first launch, which a later one (a test's) has closed."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _quiet_console() -> None:
    # Installed before DBOS looks: it adds its own handler only to a logger that has none.
    logger = logging.getLogger("dbos")
    if not any(isinstance(h, _Stderr) for h in logger.handlers):
        for old in list(logger.handlers):
            logger.removeHandler(old)
        handler = _Stderr()
        handler.name = "__dbos_console_log_handler__"
        logger.addHandler(handler)
        logger.propagate = False


def launch(url: str | None = None, executor_id: str | None = None) -> Launched:
    """Configure and launch DBOS once per process; recovery of this executor's pending
    workflows starts here (DBOS re-enqueues them and runs them on its own threads)."""
    global _current
    wanted = Launched(url or database_url(), executor_id or LOCAL_EXECUTOR)
    with _lock:
        if _current == wanted:
            return wanted
        if _current is not None:
            _destroy()
        if wanted.url.startswith(_SQLITE):
            # DBOS makes the SQLite file but not its folder; private, as the rest of the state home.
            folder = Path(wanted.url.removeprefix(_SQLITE)).parent
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _quiet_console()
        from dbos import DBOS, DBOSConfig

        config: DBOSConfig = {
            "name": APP_NAME,
            "system_database_url": wanted.url,
            "executor_id": wanted.executor_id,
            "application_version": APP_VERSION,
            # The CLI's output is the user's; DBOS speaks only when something is wrong.
            "log_level": "WARNING",
            # DBOS's listener polls the database this often, and a shutdown waits up to one
            # interval for it: a second is felt at the end of every command.
            "notification_listener_polling_interval_sec": LISTENER_POLL_S,
        }
        DBOS(config=config)
        try:
            DBOS.launch()
        except BaseException:
            _destroy()
            raise
        _current = wanted
        return wanted


@contextmanager
def client(url: str | None = None) -> Iterator[DBOSClient]:
    """A reader of the database that runs no workflow: nothing is recovered by opening it."""
    from dbos import DBOSClient

    opened = DBOSClient(system_database_url=url or database_url())
    try:
        yield opened
    finally:
        opened.destroy()


def current() -> Launched | None:
    """What this process launched, if anything."""
    return _current


def shutdown() -> None:
    """Stop DBOS's threads and close its database; a later `launch` starts afresh."""
    with _lock:
        _destroy()


def _destroy() -> None:
    global _current
    if "dbos" in sys.modules:  # never loaded: nothing to stop
        from dbos import DBOS

        DBOS.destroy(destroy_registry=False)
    _current = None
