"""What the slash commands and the terminal CLI do, one module per verb.

Each command returns the text to print and raises BridgeError for what the user must fix.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BridgeError
from ..paths import find_worktree
from ..store import Store

NO_LOOP = (
    "autopilot-codex: no loop in this worktree. Start one with /autopilot-codex:codex-plan <goal>"
)
TERMINAL = ("done", "aborted")


def worktree_of(cwd: str | Path) -> Path:
    worktree = find_worktree(cwd)
    if worktree is None:
        raise BridgeError(
            f"{cwd} is not inside a git repository; autopilot-codex needs one (run `git init`)"
        )
    return worktree




def store_of(cwd: str | Path) -> Store:
    return Store(worktree_of(cwd))
