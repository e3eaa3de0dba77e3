"""The wall around one of the user's checks.

A check is the user's command, but it runs the code the implementer just wrote, so it gets
what a test suite needs and nothing a thief wants: the work tree and its temporary folder
(`TMPDIR`, or a private `/tmp`) writable; the files git and the hosts run programs from
(`wall.py`'s protected paths) read-only; the state home, the manager's key, the helper's
secret and every credential store hidden; `$HOME` and the rest of the system read-only but for
its tools' caches, which are the loop's own (`caches.py`); no
network and no daemon's socket, unless the user's config says `checks_network: true` (for
suites that need a local database or the network; the user's choice, made in the state home,
which nothing walled can write).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..paths import within
from . import caches
from .places import hidden, own_home, shown
from .rules import Rules

_TMP = os.path.realpath("/tmp")


def _temporary(tmp: str, home: str) -> bool:
    """Whether `TMPDIR` may be made writable: a folder of its own outside the home (where it
    would make settings writable: the hook's environment is not the user's alone to set).
    `TMPDIR=/tmp` is served by the private `/tmp`: the shared one holds other programs'
    sockets."""
    if not (Path(tmp).is_absolute() and Path(tmp).is_dir()):
        return False
    real = os.path.realpath(tmp)
    homes = [os.path.realpath(h) for h in (home, own_home()) if h]
    return real != _TMP and not any(within(real, h) or within(h, real) for h in homes)


def _bindable(place: str, writable: tuple[str, ...], homes: list[str]) -> bool:
    """Whether the loop's folder may be bound over the cache `place`: not one inside the work
    tree or TMPDIR (writable there already: a bind would hide it), nor one around them or a
    home (a variable naming `/` or the home must not empty the check's world)."""
    real = os.path.realpath(place)
    inside = any(within(real, os.path.realpath(w)) for w in writable)
    around = any(within(os.path.realpath(p), real) for p in (*writable, *homes))
    return not (inside or around)


def rules(worktree: str, env: Mapping[str, str], *, network: bool = False) -> Rules:
    from ..hostwall import spec_for

    tmp = env.get("TMPDIR", "")
    temp = [tmp] if _temporary(tmp, env.get("HOME", "")) else []
    sealed = [str(p) for p in spec_for(Path(worktree)).protected_paths()]
    writable = (worktree, *temp)
    kept = caches.plan(worktree, env)
    homes = [h for h in (env.get("HOME", ""), own_home()) if h]
    bound = tuple(pair for pair in kept.bound if _bindable(pair[1], writable, homes))
    return Rules(
        writable=(*writable, *kept.own),
        bound=bound,
        env=kept.env,
        shown=shown(),
        sealed=tuple(sealed),
        hidden=hidden(worktree, network=network),
        fresh=("/tmp",),
        network=network,
    )
