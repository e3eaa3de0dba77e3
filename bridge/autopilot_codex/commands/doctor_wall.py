"""`doctor`'s lines about the wall: per host, on / partly / off, each missing piece and the
command that fixes it; and the manager's key when the implementer can read it."""

from __future__ import annotations

from pathlib import Path

from .. import credentials
from ..guarded import HostWall, host_wall
from ..hosts import HOSTS, label


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
    return False, "\n".join(lines)


def key_line() -> str | None:
    """A note when the key is exported where the implementer can read it."""
    return credentials.exposure_note() if credentials.exposed() else None
