# ruff: noqa: PTH110, PTH118, PTH120, PTH123, PTH208
# (os.path on purpose: importing pathlib is part of what this prototype leaves out)
"""Prototype, for measurement only: the idle-hook decision with the fewest imports.

The same decision as the bridge's gate (payload JSON -> worktree -> this worktree's active
marker -> owning session), but with `os.path` instead of pathlib, the markers' own `worktree`
field instead of a hashed key, and no package import machinery (`python -m`). It shows how close
to `python -c pass` the "loops elsewhere" hook can get. Exit 0 = silent allow, 3 = would admit.
"""

import json
import os
import sys


def main() -> int:
    try:
        data = json.loads(sys.stdin.buffer.read(32 * 1024 * 1024))
    except (ValueError, RecursionError):
        data = None
    cwd = data.get("cwd") if isinstance(data, dict) else None
    here = os.path.realpath(cwd if isinstance(cwd, str) and cwd else os.getcwd())
    while not os.path.exists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return 0
        here = parent
    home = os.environ.get("AUTOPILOT_CODEX_HOME") or os.path.expanduser("~/.autopilot-codex")
    active = os.path.join(os.path.expanduser(home), "active")
    try:
        names = os.listdir(active)
    except OSError:
        return 0
    session = data.get("session_id") if isinstance(data, dict) else None
    for name in names:
        try:
            with open(os.path.join(active, name), "rb") as handle:
                marker = json.loads(handle.read())
        except (OSError, ValueError):
            return 3
        if marker.get("worktree") == here:
            owner = marker.get("session_id")
            return 0 if owner and isinstance(session, str) and owner != session else 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
