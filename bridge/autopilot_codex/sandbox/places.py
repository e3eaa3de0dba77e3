"""What no walled process of the supervisor may read on this machine, whatever it runs for.

The wall's own list (`hosts/wall.py` through `guarded.spec_for`: the state home, every
credential store, the user's `wall_deny_read`), and by name the two secrets inside the state
home (the manager's key file and the resident helper's folder), in case a work tree inside
the state home brings its folder back into view. `/run` holds the sockets of the user's agents
and daemons (ssh and gpg agents, the session bus, docker): hidden unless the network is on.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .. import credentials, helper
from ..paths import state_home

SOCKETS = "/run"


def shown() -> tuple[str, ...]:
    """The user's home and config folder, read-only, even where a private `/tmp` would cover
    them: git reads the user's name from there, and test runners their settings."""
    return tuple(os.environ[n] for n in ("HOME", "XDG_CONFIG_HOME") if os.environ.get(n))


def hidden(worktree: str, *, network: bool = False) -> tuple[str, ...]:
    home = state_home()
    config = home / "config.json"
    try:
        stamp = config.stat().st_mtime_ns
    except OSError:
        stamp = 0
    found = _hidden(worktree, str(home), os.environ.get("HOME", ""), stamp)
    return found if network else (*found, SOCKETS)


@lru_cache(maxsize=8)
def _hidden(worktree: str, home: str, user_home: str, stamp: int) -> tuple[str, ...]:
    """Kept while the config file and the homes stay the same (the rounds driver lives long)."""
    from ..guarded import spec_for

    del user_home, stamp  # only part of the cache's key
    spec = spec_for(Path(worktree))
    places = [*spec.hidden_paths(), credentials.path(Path(home)), Path(helper.run_dir(home))]
    return tuple(str(p) for p in places)
