"""Which git binary the bridge runs: one the implementer cannot have written.

The implementer runs as the user, so any file or directory the user can write is suspect: a
`git` shim in `~/.local/bin` (early on many PATHs) would otherwise run with the bridge's
environment on every hook. The order:

1. `AUTOPILOT_CODEX_GIT`, when set in the bridge's own environment (the user's shell or the
   host's settings, which the hooks inherit): an absolute path to an executable file, used as
   given. It is the user's choice, so it is not checked for ownership.
2. The usual system places (`/usr/bin/git`, `/usr/local/bin/git`, `/opt/homebrew/bin/git`,
   `/bin/git`), then each absolute PATH entry; the first `git` that is trusted.

Trusted means: an executable regular file (symlinks resolved) that only root can write or
replace: the file, the directory holding it and the directory holding the link are owned by
root and writable by no group or other user, and none is under the user's home. Ownership
rather than `os.access`: for root every file is writable, yet a root-owned `/usr/bin/git` is
still not the implementer's work. For root, every file is root's, so only the system places
are trusted, never another PATH entry. On Windows, where these permission
checks do not carry over, the first `git` on PATH is used (documented in docs/security.md).
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from .errors import BridgeError

OVERRIDE = "AUTOPILOT_CODEX_GIT"
SYSTEM_PLACES = ("/usr/bin/git", "/usr/local/bin/git", "/opt/homebrew/bin/git", "/bin/git")


def git_binary() -> str:
    """The absolute path of the git to run; a BridgeError when there is none to trust."""
    return _resolve(os.environ.get(OVERRIDE, ""), os.environ.get("PATH", ""))


@lru_cache(maxsize=4)
def _resolve(override: str, path: str) -> str:
    if override:
        if not Path(override).is_absolute() or not os.access(override, os.X_OK):
            raise BridgeError(f"{OVERRIDE}={override} is not an absolute path to an executable")
        return override
    if os.name == "nt":
        import shutil

        found = shutil.which("git")
        if found is None:
            raise BridgeError("git was not found on PATH")
        return found
    entries = [Path(p) for p in path.split(os.pathsep) if Path(p).is_absolute()]
    for candidate in (*map(Path, SYSTEM_PLACES), *(p / "git" for p in entries)):
        if trusted(candidate):
            return str(candidate)
    raise BridgeError(
        "no trusted git binary: install git in a system directory or set "
        f"{OVERRIDE} to its absolute path"
    )


def trusted(candidate: Path, system_places: Sequence[str] = SYSTEM_PLACES) -> bool:
    """A git (or, with its own `system_places`, another system program) the user cannot have
    written or swapped (see the module's docstring)."""
    if os.name == "posix" and os.geteuid() == 0 and str(candidate) not in system_places:
        return False
    try:
        if not candidate.exists():
            return False
        real = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    if not real.is_file() or not os.access(real, os.X_OK):
        return False
    home = Path.home().resolve() if "HOME" in os.environ else None
    if home is not None and any(place.is_relative_to(home) for place in (candidate, real)):
        return False
    return all(_root_only(p) for p in (real, real.parent, candidate.parent.resolve()))


@lru_cache(maxsize=8)
def system_program(places: tuple[str, ...]) -> str | None:
    """The first of `places` that is trusted (bubblewrap, timeout, setpriv), or None: a
    system program the bridge starts is found as git is, never from a PATH."""
    return next((place for place in places if trusted(Path(place), places)), None)


def _root_only(place: Path) -> bool:
    try:
        info = place.stat()
    except OSError:
        return False
    return info.st_uid == 0 and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


# The oldest git whose switches the runner relies on (runner.py names each one's version).
MIN_VERSION = (2, 36)


def git_version(binary: str) -> tuple[int, ...]:
    """`git --version` as numbers; () when it cannot be read."""
    import subprocess

    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, env={}, timeout=30, check=False
        ).stdout.decode("ascii", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return ()
    parts = out.split()[-1].split(".") if out.split() else []
    return tuple(int(part) for part in itertools.takewhile(str.isdigit, parts))
