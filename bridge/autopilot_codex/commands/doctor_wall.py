"""`doctor`'s lines about the wall: per host, on / partly / off, each missing piece and the
command that fixes it; and the manager's key when the implementer can read it."""

from __future__ import annotations

import os
from pathlib import Path

from .. import credentials
from ..hosts import HOSTS, label
from ..hostwall import HostWall, host_wall, spec_for

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
    """(walled, text) per host: text names the level, every missing piece and each fix; then
    the credential stores found, and whether each host's wall hides them."""
    walls = [host_wall(name, worktree) for name in HOSTS]
    return [*(_host_lines(wall) for wall in walls), credentials_line(worktree, walls)]


def credentials_line(worktree: Path, walls: list[HostWall]) -> tuple[bool, str]:
    """(hidden by every host's wall, text): the credential stores that exist here (the
    standard ones, the hosts' logins wherever their variables put them, the user's
    `wall_deny_read`), and which walls hide them. A wall that is on hides every one."""
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    spec = spec_for(worktree, home)
    found = [p for p in spec.hidden_paths() if p != spec.state_home and p.exists()]
    if not found:
        return True, "credential stores: none found; the wall hides each standard one it finds"
    names = ", ".join(_short(p, home) for p in found)
    on = [label(w.host) for w in walls if w.walled]
    off = [label(w.host) for w in walls if not w.walled]
    if not off:
        return True, f"credential stores: {names}: hidden from the implementer by the wall"
    hidden = f"hidden by {' and '.join(on)}'s wall; " if on else ""
    return False, (
        f"credential stores: {names}: {hidden}READABLE by an implementer in "
        f"{' or '.join(off)} (its wall is not on)"
    )


def _short(path: Path, home: Path) -> str:
    return f"~/{path.relative_to(home)}" if home in path.parents else str(path)


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
    return credentials.exposure_note() if credentials.exposed() else None
