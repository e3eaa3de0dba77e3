"""The wall around one of the user's checks.

A check is the user's command, but it runs the code the implementer just wrote, so it gets
what a test suite needs and nothing a thief wants: the work tree and its temporary folder
(`TMPDIR`, or a private `/tmp`) writable; the files git and the hosts run programs from
(`hosts/wall.py`'s protected paths) read-only; the state home, the manager's key, the helper's
secret and every credential store hidden; `$HOME` and the rest of the system read-only; no
network and no daemon's socket, unless the user's config says `checks_network: true` (for
suites that need a local database or the network; the user's choice, made in the state home,
which nothing walled can write).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .places import hidden, shown
from .rules import Rules

_TMP = os.path.realpath("/tmp")


def rules(worktree: str, env: Mapping[str, str], *, network: bool = False) -> Rules:
    from ..guarded import spec_for

    tmp = env.get("TMPDIR", "")
    # `TMPDIR=/tmp` is served by the private `/tmp`: the shared one holds other programs' sockets.
    own = Path(tmp).is_absolute() and Path(tmp).is_dir() and os.path.realpath(tmp) != _TMP
    temp = [tmp] if own else []
    sealed = [str(p) for p in spec_for(Path(worktree)).protected_paths()]
    return Rules(
        writable=(worktree, *temp),
        shown=shown(),
        sealed=tuple(sealed),
        hidden=hidden(worktree, network=network),
        fresh=("/tmp",),
        network=network,
    )
