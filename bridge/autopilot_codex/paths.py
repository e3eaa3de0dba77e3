"""Where a loop's files live. Standard library only: the idle hook path imports this module."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

# A worktree's root holds `.git` as a directory (main worktree) or a file (linked worktree).
GIT_MARKER = ".git"


def state_home() -> Path:
    """The root of all autopilot-codex state on this machine.

    `CLAUDE_PLUGIN_DATA` is deliberately not used here: it differs between an installed plugin
    and `--plugin-dir`, and a loop planned from a terminal must be found by the hooks of the
    session that later runs it. The plugin data directory only holds the Python environment.
    """
    configured = os.environ.get("AUTOPILOT_CODEX_HOME", "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".autopilot-codex"


def find_worktree(start: str | Path) -> Path | None:
    """The top of the git worktree containing `start`, without running git."""
    try:
        here = Path(start).resolve()
        for candidate in (here, *here.parents):
            if (candidate / GIT_MARKER).exists():
                return candidate
    except (OSError, RuntimeError, ValueError):
        # A path the OS refuses (a NUL byte, a lone surrogate, a name too long) is in no worktree.
        return None
    return None


def project_key(worktree: Path) -> str:
    """One key per worktree: two worktrees of one repository are two loops."""
    real = str(worktree.resolve())
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in worktree.name)[:40]
    return f"{name or 'root'}-{digest}"


def project_dir(worktree: Path, home: Path | None = None) -> Path:
    return (home or state_home()) / "projects" / project_key(worktree)


def active_dir(home: Path | None = None) -> Path:
    """One file per running loop; the launcher answers idle hooks by finding this empty."""
    return (home or state_home()) / "active"


def active_marker(worktree: Path, home: Path | None = None) -> Path:
    return active_dir(home) / project_key(worktree)
