"""The implementer's spend, charged to the loop at each hook: what the host recorded since the
last look (`Host.spend_reader`), read from where the last look stopped (`State.spend_cursors`).

The host names its record in the hook payload (`transcript_path`); the payload comes from the
host, not the implementer. The records of the same session's subagents and background tasks
(`SpendReader.related`) are read too, each under a cursor of its own. A host without a reader,
or a payload without a path, charges nothing: `status` then says the implementer's spend is not
seen.

The meter only ever rises: a record cut short or rewritten under the reader (the implementer
can edit files as the host's user) keeps the spend already counted, and is recorded in the
ledger as `spend.tampered`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ..host import SpendRead
from ..state import SpendCursor, State

# Records remembered besides the session's own: one forgotten and seen again is read from its
# start, which counts its spend twice rather than never.
CURSORS_KEPT = 32

if TYPE_CHECKING:
    from .context import HookContext


def charged(ctx: HookContext, state: State) -> State:
    """The state with what the implementer spent since the last look added to its meter."""
    reader = ctx.host.spend_reader()
    path = ctx.payload.transcript_path
    if reader is None or not path:
        return state
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(state.started_epoch))
    own = ctx.config.implementer_prices or None
    cursors = {c.path: c for c in state.spend_cursors}
    paths = [path, *reader.related(path, state.started_epoch)]
    usd, tokens, unpriced = 0.0, 0, set(state.implementer_unpriced)
    for record in paths:
        got = reader.read(record, _last(cursors.get(record)), since, own, ctx.payload.model)
        # Never less: a reader only adds, whatever the record now says.
        usd += max(0.0, got.usd)
        tokens += max(0, got.tokens)
        unpriced |= set(got.unknown)
        if got.tampered:
            ctx.store.append_event("spend.tampered", record=record, why=got.tampered)
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
