"""Where a loop's files live. The idle-hook gate imports this module, so it needs nothing but
`os` at import time: pathlib and hashlib load only when a caller asks for a Path or a key.
"""

from __future__ import annotations

import os

# Not `typing.TYPE_CHECKING`: importing typing is a cost the gate avoids. mypy honours the name.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

# A worktree's root holds `.git` as a directory (main worktree) or a file (linked worktree).
GIT_MARKER = ".git"


def run_dir(home: str) -> str:
    """The resident helper's folder in the state home: its sockets, locks and stamps."""
    return os.path.join(home, "run")


def state_home_str() -> str:
    configured = os.environ.get("AUTOPILOT_CODEX_HOME", "").strip()
    return (
        os.path.expanduser(configured)
        if configured
        else os.path.join(os.path.expanduser("~"), ".autopilot-codex")
    )


def state_home() -> Path:
    """The root of all autopilot-codex state on this machine.

    `CLAUDE_PLUGIN_DATA` is deliberately not used here: it differs between an installed plugin
    and `--plugin-dir`, and a loop planned from a terminal must be found by the hooks of the
    session that later runs it. The plugin data directory only holds the Python environment.
    """
    from pathlib import Path

    return Path(state_home_str())


def find_worktree_str(start: str) -> str | None:
    """The real path of the git worktree containing `start`, without running git."""
    try:
        here = os.path.realpath(start)
        while True:
            if os.path.exists(os.path.join(here, GIT_MARKER)):
                return here
            parent = os.path.dirname(here)
            if parent == here:
                return None
            here = parent
    except (OSError, ValueError):  # NUL bytes, lone surrogates, names too long
        return None


def find_worktree(start: str | Path) -> Path | None:
    from pathlib import Path

    found = find_worktree_str(str(start))
    return Path(found) if found is not None else None


def project_key(worktree: str | Path) -> str:
    """One key per worktree: two worktrees of one repository are two loops."""
    import hashlib

    real = os.path.realpath(worktree)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in os.path.basename(real))[:40]
    return f"{name or 'root'}-{digest}"


def project_dir(worktree: str | Path, home: Path | None = None) -> Path:
    return (home or state_home()) / "projects" / project_key(worktree)


def active_dir(home: Path | None = None) -> Path:
    """One file per running loop; the launcher answers idle hooks by finding this empty."""
    return (home or state_home()) / "active"


def active_marker(worktree: str | Path, home: Path | None = None) -> Path:
    return active_dir(home) / project_key(worktree)


# The two indexes of guarded worktrees. Each guarded loop has the same marker in both; one
# that goes missing or changes is restored from the other and logged as tampering. (Without
# the wall, a program of this user can remove both: that is the wall's to close.)
INDEXES = ("active", "rails")


def rails_marker(worktree: str | Path, home: Path | None = None) -> Path:
    """The second copy of the active marker, in an index of its own."""
    return (home or state_home()) / INDEXES[1] / project_key(worktree)


def within(path: str, root: str) -> bool:
    """Whether the real path `path` is `root` or lies below it (both real, absolute)."""
    if path == root:
        return True
    return path.startswith(root if root.endswith(os.sep) else root + os.sep)
