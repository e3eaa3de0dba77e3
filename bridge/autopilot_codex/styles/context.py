"""What one admitted hook hands a loop style: its payload, the loop's store, settings and host,
and the implementer's spend charged at each hook (`HookContext.charged`, the host's wing's
`hosts.charge.charged`). Its own module, so a style imports it without importing the registry
that imports the style.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import defaults
from ..hosts import charge
from ..output import terminal_command

if TYPE_CHECKING:
    from pathlib import Path

    from ..config import Config
    from ..hookio import HookInput
    from ..host import Host
    from ..manager import Manager
    from ..manager.select import ManagerFactory
    from ..store import Store


@dataclass(frozen=True)
class Limits:
    stall_limit: int = defaults.STALL_LIMIT
    no_progress_limit: int = defaults.NO_PROGRESS_LIMIT
    # How the reader of a message runs one of our commands (a slash command in Claude Code).
    command: Callable[[str], str] = field(default=terminal_command)


@dataclass
class HookContext:
    """Everything one admitted hook needs: its payload, the loop's store, settings and host."""

    payload: HookInput
    # The store the caller built, if any; else `store` builds it at its first use, in the
    # worktree's folder (a hook that holds its loop once comes to the store once: `holding`),
    # and keeps it here for the entrance to tell what it saved (`announce`).
    built: Store | None
    config: Config
    host: Host
    manager: ManagerFactory
    worktree: Path | None = None

    @functools.cached_property
    def store(self) -> Store:
        if self.built is None:
            from ..store import Store

            assert self.worktree is not None, "a hook context needs a store or a worktree"
            self.built = Store(self.worktree, lock_timeout=self.config.lock_timeout_s)
        return self.built

    @functools.cached_property
    def limits(self) -> Limits:
        return Limits(
            stall_limit=self.config.stall_limit,
            no_progress_limit=self.config.no_progress_limit,
            command=self.host.command,
        )

    # The implementer's spend since the last look, on the loop's meter: the host's wing reads
    # it (`hosts.charge`), entered straight from the style, in one call.
    charged = charge.charged


def selected_manager(model: str, config: Config) -> Manager:
    """A hook's manager: the configured backend, imported only when a call is about to be
    made (most hooks never reach the manager and must not pay for importing it)."""
    from ..manager.select import selected

    return selected(model, config)
