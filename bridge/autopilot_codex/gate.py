"""The first thing a hook runs: decide, with the standard library only, whether this hook
has anything to do. Most hooks fire in sessions with no loop in their worktree, and those
must cost no more than starting the interpreter.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

from .paths import active_marker, find_worktree

# A hook payload carries at most a file's content; anything larger is cut before parsing.
MAX_STDIN_BYTES = 32 * 1024 * 1024


class Admitted(NamedTuple):
    """A hook that reached a running loop: the raw payload and the worktree it belongs to."""

    raw: bytes
    worktree: Path


def read_stdin() -> bytes:
    try:
        return sys.stdin.buffer.read(MAX_STDIN_BYTES)
    except (OSError, ValueError):
        return b""


def admit(raw: bytes) -> Admitted | None:
    """None when no running loop can care about this payload (the silent allow)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # deep nesting: RecursionError
        data = None
    cwd = data.get("cwd") if isinstance(data, dict) else None
    session = data.get("session_id") if isinstance(data, dict) else None
    worktree = find_worktree(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    if worktree is None:
        return None
    marker = active_marker(worktree)
    try:
        owner = json.loads(marker.read_bytes()).get("session_id")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError):
        owner = None  # a damaged marker: let the engine look at the real state
    if owner and isinstance(session, str) and session != owner:
        return None
    return Admitted(raw, worktree)
