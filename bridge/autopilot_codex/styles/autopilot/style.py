"""The autopilot style as `styles.Style` sees it: its hooks, its views and its verbs."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .handlers import handle as handle

if TYPE_CHECKING:
    from ...state import State
    from ...store import Store

STARTED_BY = "plan <goal>"
RESUMED_BY = "resume"
ENDED_BY = "stop"


def cancel(store: Store, state: State) -> None:
    """An autopilot loop is stopped (`stop`), not cancelled."""


def status_text(state: State, store: Store, entry: Callable[[str], str]) -> str:
    from .view import status_text as text  # a view: not on the hook path

    return text(state, store, entry)
