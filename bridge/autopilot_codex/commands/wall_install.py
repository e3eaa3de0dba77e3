"""`install` (guarded by default; `doctor --wall`): the wall in each host's own settings, as
its boundary puts it there (`Boundary.user_wall`: written after a backup and shown, or printed
for the user to put in).

The boundary names each worktree's own paths: `install` run outside a repository writes the
rest, and records that the user chose the wall (`consent`), so `plan` adds a repository's
paths when a loop starts there (`extend`). `install --unguarded` takes the choice back and
writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from .. import hosts
from ..errors import BridgeError
from ..hostwall import HostWall, host_wall, spec_for
from ..paths import state_home
from ..wall import sandbox_usable

# A worktree no boundary can name: its paths are what a boundary without a repository leaves out.
_NOWHERE = Path("/autopilot-codex-no-worktree")


def user_wall(host: str, worktree: Path | None, env: Mapping[str, str] | None = None) -> list[str]:
    """`host`'s wall in the user's own settings, for `worktree` (None: for none yet)."""
    environ = os.environ if env is None else env
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    boundary = hosts.get(host).boundary()
    assert boundary is not None  # asked only of a host with a boundary
    return boundary.user_wall(spec_for(worktree or _NOWHERE, home), worktree is not None, environ)


def consent() -> Path:
    """Where `install` records that the user chose the wall (the state home: the implementer
    can neither read nor write it from inside the wall)."""
    return state_home() / "guarded"


def extend(wall: HostWall, worktree: Path, env: Mapping[str, str] | None = None) -> HostWall:
    """`plan` after a guarded install, for a host that keeps the wall in the user's settings:
    a repository the wall does not name yet gets its paths added (after a backup, said in the
    plan's output), and the wall is judged again. Never where the sandbox cannot start: the
    boundary would then refuse every command of every session."""
    if wall.walled or not consent().exists():
        return wall
    boundary = hosts.get(wall.host).boundary()
    if boundary is None or not boundary.writes_user_wall:
        return wall
    if not sandbox_usable(boundary.needs_tools)[0]:
        return wall
    try:
        lines = user_wall(wall.host, worktree, env)
    except BridgeError as exc:
        return replace(wall, notes=(f"The wall was not added for this repository: {exc}",))
    judged = host_wall(wall.host, worktree, env=env)
    said = [line[:-1] + "." if line.endswith(":") else line for line in lines[:-1]]
    return replace(judged, notes=tuple(said))


def wall_install(worktree: Path) -> str:
    """`doctor --wall`: the wall for this repository in each host's settings."""
    walls = ["\n".join(user_wall(h.name, worktree)) for h in hosts.every() if h.boundary()]
    return "\n\n".join(walls)
