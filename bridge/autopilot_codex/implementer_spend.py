"""The implementer's spend, charged to the loop at each hook: what the host recorded since the
last look (`Host.spend_reader`), read from where the last look stopped (`State.spend_cursors`).

The host names its record in the hook payload (`transcript_path`); the payload comes from the
host, not the implementer. A host without a reader, or a payload without a path, charges
nothing: `status` then says the implementer's spend is not seen.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .state import SpendCursor, State

# Records remembered: one forgotten and seen again is read from its start, which counts its
# spend twice rather than never.
CURSORS_KEPT = 8

if TYPE_CHECKING:
    from .styles.context import HookContext


def charged(ctx: HookContext, state: State) -> State:
    """The state with what the implementer spent since the last look added to its meter."""
    reader = ctx.host.spend_reader()
    path = ctx.payload.transcript_path
    if reader is None or not path:
        return state
    cursor = next((c for c in state.spend_cursors if c.path == path), None)
    offset, seen = (cursor.offset, cursor.seen) if cursor is not None else (0, [])
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(state.started_epoch))
    got = reader.read(path, offset, seen, since, ctx.config.implementer_prices or None)
    others = [c for c in state.spend_cursors if c.path != path]
    unpriced = sorted(set(state.implementer_unpriced) | set(got.unknown))
    return state.evolve(
        implementer_used_usd=state.implementer_used_usd + got.usd,
        implementer_tokens=state.implementer_tokens + got.tokens,
        implementer_unpriced=unpriced,
        spend_cursors=[*others, SpendCursor(path, got.offset, list(got.seen))][-CURSORS_KEPT:],
    )
