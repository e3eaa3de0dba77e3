"""Loop styles: autopilot (the manager loop), and the siblings that reuse its guards and store.

A style answers the hooks of a loop of its kind. Adding one is adding a module with a `handle`
function and a line in `STYLES`; the active marker names each loop's style, so the hook path
imports only the style it needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import BridgeError
from ..guards import Limits

if TYPE_CHECKING:
    from ..config import Config
    from ..hookio import Answer, HookInput
    from ..hosts import Host
    from ..manager.select import ManagerFactory
    from ..store import Store

# style name -> module with `handle(ctx: HookContext) -> Answer`.
STYLES: dict[str, str] = {
    "autopilot": "autopilot_codex.styles.autopilot.handlers",
    "ralph": "autopilot_codex.styles.ralph.handlers",
    "rounds": "autopilot_codex.styles.rounds",
}


@dataclass
class HookContext:
    """Everything one admitted hook needs: its payload, the loop's store, settings and host."""

    payload: HookInput
    store: Store
    config: Config
    host: Host
    manager: ManagerFactory

    @property
    def limits(self) -> Limits:
        return Limits(
            stall_limit=self.config.stall_limit,
            no_progress_limit=self.config.no_progress_limit,
            command=self.host.command,
        )


Handler = Callable[[HookContext], "Answer"]


def get(name: str) -> Handler:
    module = STYLES.get(name)
    if module is None:
        raise BridgeError(f"unknown loop style {name!r}; known: {', '.join(sorted(STYLES))}")
    handle: Handler = importlib.import_module(module).handle
    return handle
