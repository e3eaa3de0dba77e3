"""`doctor`'s lines about the wall: per host, on / partly / off, each missing piece and the
command that fixes it; and the manager's key when the implementer can read it."""

from __future__ import annotations

from pathlib import Path

from .. import credentials
from ..guarded import HostWall, host_wall
from ..hosts import HOSTS, label

# What the bridge alone cannot make true (docs/security.md, "What this layer cannot do
# without the wall"): said wherever a loop would run unguarded.
UNWALLED_LIMITS = (
    "the implementer can read the manager's key from an ancestor's /proc/<pid>/environ while "
    "it is exported (autopilot-codex login moves it)",
    "a program running as you can restore the loop's state, witness and ledger together from "
    "an older copy, or remove both marker indexes",
    "a renamed copy of claude or codex is not recognised by the rails",
    "details: docs/security.md",
)


def wall_lines(worktree: Path) -> list[tuple[bool, str]]:
    """(walled, text) per host: text names the level, every missing piece and each fix."""
    return [_host_lines(host_wall(name, worktree)) for name in HOSTS]


def _host_lines(wall: HostWall) -> tuple[bool, str]:
    name = label(wall.host)
    if wall.walled:
        return True, f"wall ({name}): on, the implementer's commands run in its sandbox"
    lines = [
        f"wall ({name}): {wall.level}, UNGUARDED: a loop here runs with the rails as a "
        "seatbelt only; missing:"
    ]
    lines += [f"       - {piece}" for piece in wall.missing]
    lines += [f"       fix: {fix}" for fix in wall.fixes]
    lines += [f"       without it: {limit}" for limit in UNWALLED_LIMITS]
    return False, "\n".join(lines)


def key_line() -> str | None:
    """A note when the key is exported where the implementer can read it."""
    return credentials.exposure_note() if credentials.exposed() else None
