"""What one admitted hook hands a loop style: its payload, the loop's store, settings and host,
and the implementer's spend charged at each hook (`HookContext.charged`): what the host
recorded since the last look (`Host.spend_reader`), from where that look stopped
(`State.spend_cursors`). Its own module, so a style imports it without importing the registry
that imports the style.

The host names its record in the payload (`transcript_path`), which comes from the host, not
the implementer; the session's subagents' and background tasks' records (`SpendReader.related`)
are read too, each under its own cursor. A host without a reader, or a payload without a
path, charges nothing (`status` then says the implementer's spend is not seen). The meter only
rises: a record cut short or rewritten under the reader (the implementer can edit files as
the host's user) keeps the spend counted, and is logged as `spend.tampered`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import defaults
from ..host import SpendRead
from ..output import terminal_command
from ..state import SpendCursor, State

if TYPE_CHECKING:
    from ..config import Config
    from ..hookio import HookInput
    from ..host import Host
    from ..manager import Manager
    from ..manager.select import ManagerFactory
    from ..store import Store

# Records remembered besides the session's own: one forgotten and seen again is read from its
# start, which counts its spend twice rather than never.
CURSORS_KEPT = 32


@dataclass(frozen=True)
class Limits:
    stall_limit: int = defaults.STALL_LIMIT
    no_progress_limit: int = defaults.NO_PROGRESS_LIMIT
    # How the reader of a message runs one of our commands (a slash command in Claude Code).
    command: Callable[[str], str] = field(default=terminal_command)


@dataclass
class HookContext:
    """Everything one admitted hook needs: its payload, the loop's store, settings and host."""

    payload: HookInput
    store: Store
    config: Config
    host: Host
    manager: ManagerFactory

    @functools.cached_property
    def limits(self) -> Limits:
        return Limits(
            stall_limit=self.config.stall_limit,
            no_progress_limit=self.config.no_progress_limit,
            command=self.host.command,
        )

    def charged(self, state: State) -> State:
        """The state with what the implementer spent since the last look added to its meter."""
        reader = self.host.spend_reader()
        path = self.payload.transcript_path
        if reader is None or not path:
            return state
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(state.started_epoch))
        own = self.config.implementer_prices or None
        cursors = {c.path: c for c in state.spend_cursors}
        paths = [path, *reader.related(path, state.started_epoch)]
        usd, tokens, unpriced = 0.0, 0, set(state.implementer_unpriced)
        for record in paths:
            got = reader.read(record, _last(cursors.get(record)), since, own, self.payload.model)
            # Never less: a reader only adds, whatever the record now says.
            usd += max(0.0, got.usd)
            tokens += max(0, got.tokens)
            unpriced |= set(got.unknown)
            if got.tampered:
                self.store.append_event("spend.tampered", record=record, why=got.tampered)
            before = cursors.get(record)
            cursors[record] = SpendCursor(
                record,
                got.offset,
                list(got.seen),
                got.head,
                list(got.totals),
                got.model,
                got.plan,
                got.tampered or (before.tampered if before is not None else ""),
            )
        session = set(paths)
        others = [c for p, c in cursors.items() if p not in session][-CURSORS_KEPT:]
        return state.evolve(
            implementer_used_usd=state.implementer_used_usd + usd,
            implementer_tokens=state.implementer_tokens + tokens,
            implementer_unpriced=sorted(unpriced),
            spend_cursors=[*others, *(cursors[p] for p in paths)],
        )


def selected_manager(model: str, config: Config) -> Manager:
    """A hook's manager: the configured backend, imported only when a call is about to be
    made (most hooks never reach the manager and must not pay for importing it)."""
    from ..manager.select import selected

    return selected(model, config)


def _last(cursor: SpendCursor | None) -> SpendRead:
    if cursor is None:
        return SpendRead(0, ())
    return SpendRead(
        cursor.offset,
        tuple(cursor.seen),
        head=cursor.head,
        totals=tuple(cursor.totals),
        model=cursor.model,
        plan=cursor.plan,
    )
