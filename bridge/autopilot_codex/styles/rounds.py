"""The rounds style: the loop a `run` holds while its driver starts a fresh host per round.

The driver decides everything (markers, the verifier's git check, retries, the wrap-up); the
hooks of a round only get the rails, which `hookrun` applies before any style. So a round's
Stop is never blocked, and nothing else is recorded: ending the round is the driver's signal.
"""

from __future__ import annotations

from ..hookio import ALLOW, Answer
from .context import HookContext


def handle(ctx: HookContext) -> Answer:
    if ctx.payload.event == "SessionStart":
        # The driver compares before each round too; a session started by hand in the
        # worktree meanwhile is held the same way.
        from ..hosts import hostfiles

        return hostfiles.session_start(ctx.store, ctx.payload.source) or ALLOW
    return ALLOW
