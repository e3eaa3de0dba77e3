"""The autopilot style as `styles.Style` sees it: its hooks, its views and its verbs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .handlers import handle as handle

if TYPE_CHECKING:
    from ...state import State, StyleRecord
    from ...store import Store
    from .. import Entry

# Its plan's progress, reviews and verdicts are still the envelope's own fields (schema 4
# keeps them in the `autopilot` record on disk).
RECORD: type[StyleRecord] | None = None
STARTED_BY = "plan <goal>"
RESUMED_BY = "resume"
ENDED_BY = "stop"


def cancel(store: Store, state: State) -> None:
    """An autopilot loop is stopped (`stop`), not cancelled."""


def status_text(state: State, store: Store, entry: Entry) -> str:
    from .view import status_text as text  # a view: not on the hook path

    return text(state, store, entry)
