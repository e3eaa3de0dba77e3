"""The implementer's spend charged at each hook: what the host recorded since the last look
(`Host.spend_reader`), from where that look stopped (`State.spend_cursors`), added to the
loop's meter. One call into the host's wing per hook (`HookContext.charged` is this function),
whatever the host reads.

The host names its record in the payload (`transcript_path`), which comes from the host, not
the implementer; the session's subagents' and background tasks' records (`SpendReader.related`)
are read too, each under its own cursor. A host without a reader, or a payload without a
path, charges nothing (`status` then says the implementer's spend is not seen). The meter only
rises: a record cut short or rewritten under the reader (the implementer can edit files as
the host's user) keeps the spend counted, and is logged as `spend.tampered`.

Standard library only: the hook path imports it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from ..host import SpendRead
from ..state import SpendCursor, State

if TYPE_CHECKING:
    from ..config import Config
    from ..hookio import HookInput
    from ..host import Host
    from ..store import Store

# Records remembered besides the session's own: one forgotten and seen again is read from its
# start, which counts its spend twice rather than never.
CURSORS_KEPT = 32


class Hook(Protocol):
    """What charging reads of a hook (`styles.context.HookContext` is one)."""

    @property
    def payload(self) -> HookInput: ...

    @property
    def store(self) -> Store: ...

    @property
    def config(self) -> Config: ...

    @property
    def host(self) -> Host: ...


def charged(hook: Hook, state: State) -> State:
    """The state with what the implementer spent since the last look added to its meter."""
    reader = hook.host.spend_reader()
    path = hook.payload.transcript_path
    if reader is None or not path:
        return state
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(state.started_epoch))
    own = hook.config.implementer_prices or None
    cursors = {c.path: c for c in state.spend_cursors}
    paths = [path, *reader.related(path, state.started_epoch)]
    usd, tokens, unpriced = 0.0, 0, set(state.implementer_unpriced)
    for record in paths:
        got = reader.read(record, _last(cursors.get(record)), since, own, hook.payload.model)
        # Never less: a reader only adds, whatever the record now says.
        usd += max(0.0, got.usd)
        tokens += max(0, got.tokens)
        unpriced |= set(got.unknown)
        if got.tampered:
            hook.store.append_event("spend.tampered", record=record, why=got.tampered)
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
