"""Where a bug's traceback goes: `bridge.log` in the state home, never the user's terminal."""

from __future__ import annotations

import os
from pathlib import Path

from .paths import state_home


def log_crash(what: str) -> Path:
    """Append the current traceback to bridge.log; the user sees one line naming the file."""
    import traceback

    log = state_home() / "logs" / "bridge.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as handle:
            from . import __version__

            handle.write(f"--- autopilot-codex {__version__} {what} pid {os.getpid()}\n")
            handle.write(traceback.format_exc())
    except OSError:
        pass
    return log
