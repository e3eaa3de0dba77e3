"""The hosts a loop runs in (Claude Code, the Codex CLI): the registry.

A host is one package here, `hosts/<name>/`, that owns it whole behind the `Host` protocol
(`host.py`, in the core): its hook dialect, the files that hold its hooks, its headless runner for
rounds, its install and trust, its doctor check, the names of our commands in it, and its
sandbox boundary. Adding a host is adding its package and its line in `HOSTS` (mypy checks
the host against `Host`). What a host package imports on the hook path must stay in the
standard library: `hookrun` looks the host up on every admitted hook; the rest (runner,
install, doctor) is imported by the member that needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from ..registry import Registry, member

if TYPE_CHECKING:
    # Types only: a hook that needs no `roster` (only PreToolUse does) never imports it.
    from ..host import Host as Host
    from ..host import HostSet


def _loader(name: str) -> Callable[[], Host]:
    """By name, so the registry (in the core) imports no host; mypy checks each host's `HOST`
    against `Host` in the registries' test. A table's entry (`registry.member`): the entrance's
    lookup (`HOSTS.get`) enters no host, so a hook enters its host's door only where it asks
    the host for something (its spend, its dialect's answer)."""
    return cast("Callable[[], Host]", member(f"{__package__}.{name}", "HOST"))


HOSTS: Registry[Host] = Registry("host", {n: _loader(n) for n in ("claude", "codex")})


def get(name: str) -> Host:
    return HOSTS.get(name)


def every() -> list[Host]:
    """Every registered host, for a check that must hold whichever host asks."""
    return [HOSTS.get(name) for name in HOSTS]


def label(name: str) -> str:
    """A host as its user knows it ("Claude Code"); the bare name for one not registered here
    (a loop started by a host this install does not know)."""
    return HOSTS.get(name).label if name in HOSTS else name


def roster() -> HostSet:
    """Every registered host as one (`HostSet`), for the checks that must hold whichever host
    asks."""
    from ..host import HostSet

    return HostSet(tuple(every()))
