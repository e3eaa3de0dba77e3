"""Stored credentials however a command reaches them: the standard stores in the user's home
and the hosts' own logins by path, a secret file through a pattern the shell expands, and the
commands that print what a credential helper or a keychain holds.
"""

from __future__ import annotations

import functools
import glob
import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path

from .command import Command
from .rules import Where
from .secrets import is_secret_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..host import HostSet

# Words these commands print, not files they open.
_PRINTERS = frozenset({"echo", "printf"})
_GLOB = re.compile(r"[*?\[]")
# At most this many matches of one pattern are looked at.
_MATCHES = 1000


def stores(hosts: HostSet) -> tuple[str, ...]:
    """Every credential store's path, as the hook's environment names them: the wall's list,
    the key rings, and each host's login wherever its variables put it."""
    home = os.path.expanduser("~")
    return _stores(home, tuple(sorted(os.environ.items())), hosts)


@functools.lru_cache(maxsize=4)
def _stores(home: str, env: tuple[tuple[str, str], ...], hosts: HostSet) -> tuple[str, ...]:
    # Resolved once per process (and environment): every word of every command meets them. The
    # path as named is kept beside, for a store that becomes a link later (the helper lives on).
    from ..wall import KEYRINGS

    found = [*hosts.credential_stores(Path(home), dict(env)), *(Path(home) / r for r in KEYRINGS)]
    return tuple({*map(str, found), *(str(_real(path)) for path in found)})


def stored(command: Command, where: Where) -> str | None:
    """A word or redirection naming a credential store (through a link, too)."""
    places = stores(where.hosts)
    for raw in _words(command):
        named = os.path.normpath(os.path.join(command.cwd, os.path.expanduser(raw)))  # noqa: PTH118
        if _within((named, str(where.resolve(raw, command.cwd))), places):
            return f"{raw} is a credential store; the loop does not read or write it"
    return None


def globbed(command: Command, where: Where) -> str | None:
    """A pattern (`cat .e*`) is the files it matches now: a secret among them is read."""
    for raw in _words(command):
        if not _GLOB.search(raw):
            continue
        places = stores(where.hosts)
        pattern = os.path.join(command.cwd, os.path.expanduser(raw))  # noqa: PTH118
        for match in itertools.islice(glob.iglob(pattern), _MATCHES):  # noqa: PTH207
            if is_secret_path(match) or _within((str(_real(Path(match))),), places):
                return f"{raw} matches {match}, which holds credentials"
    return None


def spelled(command: Command, where: Where) -> str | None:
    """A secret file spelled the way a program takes it: curl's `@.env`, git's `HEAD:.env`."""
    for raw in _words(command):
        named = raw[1:] if raw.startswith("@") else None
        if command.name == "git" and ":" in raw:
            named = raw.rsplit(":", 1)[1]
        if named and is_secret_path(named):
            return f"{raw} names {named}, which holds credentials"
    return None


# `git config` keys whose values are credentials or run a program that hands them out.
_CREDENTIAL_KEY = re.compile(r"credential(\.|$)", re.IGNORECASE)


def git_credentials(command: Command, where: Where) -> str | None:
    """`git credential fill`, a helper run by hand, or `git config` naming `credential.*`."""
    argv = command.argv
    if command.name != "git" or len(argv) < 2:
        return None
    if argv[1].startswith("credential"):
        return f"`git {argv[1]}` hands out stored credentials"
    if argv[1] == "config" and any(_CREDENTIAL_KEY.match(a) for a in argv[2:]):
        return "git's credential settings name the helper that hands out stored credentials"
    return None


def helper_program(command: Command, where: Where) -> str | None:
    """A credential helper run by hand (`docker-credential-desktop get`)."""
    if command.name.startswith(("git-credential-", "docker-credential-")):
        return f"`{command.name}` hands out stored credentials"
    return None


def _within(paths: tuple[str, ...], places: tuple[str, ...]) -> bool:
    return any(p == place or p.startswith(place + "/") for p in paths for place in places)


def _words(command: Command) -> Iterator[str]:
    words = () if command.name in _PRINTERS else command.argv[1:]
    for raw in (*words, *command.redirects):
        text = raw.strip("'\"")
        if text and "$" not in text:
            yield text
            if "=" in text[1:]:  # `--file=path`, `KEY=path`
                yield text.split("=", 1)[1]


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return path
