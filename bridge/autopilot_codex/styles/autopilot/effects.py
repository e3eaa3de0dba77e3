"""The one door of an autopilot hook to the world beyond its state: the store and its lock,
git, the manager, the clock, the environment and this process's id. The Stop's steps reach
them only through an `Effects` value, so a test hands it a fake clock or sleep.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ... import gitrepo
from . import inflight

if TYPE_CHECKING:
    from ...manager.select import ManagerFactory
    from ...store import Store
    from ..context import HookContext


@dataclass(frozen=True)
class Effects:
    """Everything the Stop does to the world beyond its state; `of` gives the real ones."""

    store: Store
    manager: ManagerFactory
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    environ: Mapping[str, str]
    pid: int
    head: Callable[[], str]
    # The worktree's diff since a commit, without the loop's own files.
    diff: Callable[[str], gitrepo.Diff]
    commits: Callable[[str], list[str]]

    @classmethod
    def of(cls, ctx: HookContext) -> Effects:
        store = ctx.store
        return cls(
            store=store,
            manager=ctx.manager,
            clock=inflight.clock,
            sleep=time.sleep,
            environ=os.environ,
            pid=os.getpid(),
            head=lambda: gitrepo.head_sha(store.worktree),
            diff=lambda base: loop_diff(store, base),
            commits=lambda base: gitrepo.commits_since(store.worktree, base),
        )

    def now_iso(self) -> str:
        """The time the Stop's records carry, by the Stop's own clock."""
        return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(self.clock()))


def loop_diff(store: Store, base: str) -> gitrepo.Diff:
    """The work tree's diff since `base` without the loop's own files: the one way an
    autopilot hook (the Stop, a background review, a consultation) reads it."""
    return gitrepo.diff_since(
        store.worktree, base, exclude=store.excluded(), baseline=store.nested_path
    )
