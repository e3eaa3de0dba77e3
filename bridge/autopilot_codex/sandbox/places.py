"""What no walled process of the supervisor may read on this machine, whatever it runs for.

The wall's own list (`wall.py` through `hostwall.spec_for`: the state home, every
credential store, the user's `wall_deny_read`), for the home `HOME` names and for the home the
password database names (a `HOME` pointed elsewhere must not bring the real one into view), the
default state home of the latter, and by name the two secrets inside the state home (the key
file and the resident helper's folder), in case a work tree inside the state home brings its
folder back into view. Also the key rings the implementer's wall leaves readable
(`wall.py` `KEYRINGS`), and cargo's credentials where `CARGO_HOME` moves them.

A network namespace does not stop a connection to a socket that is a file: the agents' and
daemons' sockets (`/run` with the user's runtime folder, docker's and the session bus's; the
ssh agent's wherever `SSH_AUTH_SOCK` says; docker desktop's and 1Password's in the home) are
hidden unless the network is on.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .. import credentials
from ..paths import run_dir, state_home
from ..wall import KEYRINGS

# cargo's credentials where CARGO_HOME moves them.
CARGO_STORES = ("credentials.toml", "credentials")
# Sockets under the home and the system's folder of them: hidden while the network is off.
HOME_SOCKETS = (".docker/run", ".docker/desktop", ".1password")
SOCKETS = "/run"


def hidden(worktree: str, *, network: bool = False) -> tuple[str, ...]:
    home = state_home()
    config = home / "config.json"
    try:
        stamp = config.stat().st_mtime_ns
    except OSError:
        stamp = 0
    user_home = os.environ.get("HOME", "")
    cargo = os.environ.get("CARGO_HOME", "")
    found = _hidden(worktree, str(home), user_home, stamp)
    if Path(cargo).is_absolute():
        found = (*found, *(str(Path(cargo) / rel) for rel in CARGO_STORES))
    if network:
        return found
    agent = os.environ.get("SSH_AUTH_SOCK", "")
    homes = dict.fromkeys(h for h in (user_home, own_home()) if h)
    sockets = [str(Path(h) / rel) for h in homes for rel in HOME_SOCKETS]
    return (*found, SOCKETS, *sockets, *([agent] if agent else []))


def shown() -> tuple[str, ...]:
    """The user's home and config folder, read-only, even where a private `/tmp` would cover
    them: git reads the user's name from there, and test runners their settings."""
    return tuple(os.environ[n] for n in ("HOME", "XDG_CONFIG_HOME") if os.environ.get(n))


@lru_cache(maxsize=1)
def own_home() -> str:
    """The home the password database gives this user, whatever `HOME` says ("" for a user
    it does not list). Imported here: Windows has no `pwd`, and no sandbox to ask this for."""
    import pwd

    return {entry.pw_uid: entry.pw_dir for entry in pwd.getpwall()}.get(os.getuid(), "")


@lru_cache(maxsize=8)
def _hidden(worktree: str, home: str, user_home: str, stamp: int) -> tuple[str, ...]:
    """Kept while the config file and the homes stay the same (the rounds driver lives long)."""
    from ..hostwall import spec_for

    del stamp  # only part of the cache's key
    places: list[Path] = [credentials.path(Path(home)), Path(run_dir(home))]
    for each in dict.fromkeys(h for h in (user_home, own_home()) if h):
        places += spec_for(Path(worktree), Path(each)).hidden_paths()
        places += [Path(each) / ".autopilot-codex", *(Path(each) / rel for rel in KEYRINGS)]
    return tuple(str(p) for p in places)
