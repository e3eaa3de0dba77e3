"""The records of the user's evidence checks, as the state stores them.

Apart from `checks` so that loading a state (every hook does) does not import what running a
check needs (subprocess, selectors, hashing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CheckStatus = Literal["pass", "fail", "error", "timeout"]


@dataclass(frozen=True)
class CheckSpec:
    """One of the user's check commands, as typed; run with `bash -c`."""

    command: str
    timeout_s: float | None = None


@dataclass(frozen=True)
class CheckResult:
    command: str
    # None when the command never exited on its own: not started, timed out, or killed.
    exit_code: int | None
    status: CheckStatus
    duration_s: float
    # The last lines of stdout+stderr, bounded by TAIL_LINES and TAIL_CHARS, credentials redacted.
    tail: str
    # How much the command wrote in all, of which only the tail was kept.
    output_bytes: int
    # What went wrong in the bridge's words ("command not found", "timed out after 2 s"), or "".
    note: str
    started_at: str
    # The tree the check ran on, and the tree after every check of the run had finished: the
    # difference is what the checks wrote themselves (caches, bytecode, reports). "" = unknown.
    tree_hash: str
    tree_hash_after: str
