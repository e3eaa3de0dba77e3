"""Is a loop's implementer walled in? The wall's status for one host, read from the settings
that host will really run with, plus what the machine needs for a sandbox.

The host's boundary (`Host.boundary()`) reads its own settings layers (managed, the flags a
caller passes, the project's, the user's, the system's) and judges them. A host that needs
the system's sandbox tools (`Boundary.needs_tools`) is off without them. A loop records the
level it started with (`State.wall`); anything short of "on" is unguarded, and says so.
"""

from __future__ import annotations

import dataclasses
import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import hosts
from .paths import state_home
from .runfiles import nested_git
from .wall import Level, WallSpec, sandbox_usable


@dataclass(frozen=True)
class HostWall:
    """One host's wall: its level, each missing piece, and the commands that fix them."""

    host: str
    level: Level
    missing: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    # What was done to the host's settings before this judgement (`wall_install.extend`).
    notes: tuple[str, ...] = ()

    @property
    def walled(self) -> bool:
        return self.level == "on"


def spec_for(
    worktree: Path, home: Path | None = None, env: Mapping[str, str] | None = None
) -> WallSpec:
    """The wall for this worktree, with the user's own additions from the config
    (`wall_allow_hosts`, `wall_deny_read`; `~` is the user's home), the hosts' logins wherever
    `env` (the process's own by default) puts them, and the repositories nested in it now."""
    from .config import load_config

    user = home or Path(os.path.expanduser("~"))
    environ = os.environ if env is None else env
    config = load_config(warnings=[])
    hidden = tuple(
        user / p[2:] if p.startswith("~/") else Path(p)
        for p in config.wall_deny_read
        if p.startswith(("/", "~/"))
    )
    return dataclasses.replace(
        hosts.roster().wall_spec(worktree, state_home(), user, environ),
        deny_read=hidden,
        allow_hosts=config.wall_allow_hosts,
        nested_git=nested_git(worktree),
    )


def host_wall(
    host: str,
    worktree: Path,
    *,
    flag: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    system: str | None = None,
    which: Callable[[str], str | None] | None = None,
) -> HostWall:
    """The wall `host` would put around an implementer in `worktree`. `flag` is a layer the
    caller itself passes to the host (`Boundary.flag_layer`), if any."""
    environ = os.environ if env is None else env
    name = (system or platform.system()).lower()
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    boundary = hosts.get(host).boundary()
    if boundary is None:
        return HostWall(host, "off", (f"{hosts.label(host)} has no sandbox the wall can use",))
    layers = boundary.layers(worktree, home, environ, name)
    if flag is not None:
        layers[boundary.flag_layer] = dict(flag)
    status = boundary.judge(spec_for(worktree, home, environ), layers)
    fixes = boundary.fixes(status, home, environ, name)
    usable, prereqs = sandbox_usable(boundary.needs_tools, name, which)
    missing = list(status.missing)
    level: Level = status.level
    if not usable:
        level = "off"
        absent = [f"{tool} is not installed: the sandbox cannot start" for tool in prereqs.missing]
        missing = [*absent, *prereqs.notes, *missing]
        if prereqs.fix:
            fixes = [prereqs.fix, *fixes]
    return HostWall(host, level, tuple(missing), tuple(fixes))


def headline(wall: HostWall, *, limit: int = 8) -> str:
    """`plan`'s lines: "walled", or UNGUARDED with each missing piece and its fix."""
    label = hosts.label(wall.host)
    done = "".join(f"{note}\n" for note in wall.notes)
    if wall.walled:
        return f"{done}Wall: walled ({label}'s sandbox holds the implementer in)."
    how = "partly walled" if wall.level == "partly" else "no sandbox"
    lines = [
        f"UNGUARDED ({how}, {label}): the implementer can reach what the rails cannot see; "
        "the rails are a seatbelt, not a wall. Missing:"
    ]
    lines += [f"  - {m}" for m in wall.missing[:limit]]
    if len(wall.missing) > limit:
        lines.append(f"  ... and {len(wall.missing) - limit} more (`autopilot-codex doctor`)")
    lines += [f"Fix: {f}" for f in wall.fixes]
    return done + "\n".join(lines)


def status_line(wall: str, missing: list[str]) -> str:
    """`status`'s line about the wall the loop started with ("" when it was not judged)."""
    if not wall:
        return ""
    if wall == "on":
        return "Wall: walled"
    first = f"; first: {missing[0]}" if missing else ""
    return (
        f"Wall: UNGUARDED ({wall}; {len(missing)} missing piece(s){first}); the rails are a "
        "seatbelt, not a wall. `autopilot-codex doctor` lists the fixes"
    )
