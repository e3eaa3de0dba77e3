"""Is a loop's implementer walled in? The wall's status for one host, read from the settings
that host will really run with, plus what the machine needs for a sandbox.

Claude Code: its settings layers (managed, `--settings`, local, project, user), judged by
`claude_boundary.effective_status`, and bubblewrap/socat on Linux. Codex: its config layers
(`-c` overrides, project `.codex/config.toml`, `$CODEX_HOME/config.toml`, the system's), judged by
`codex_boundary.effective_status`; Codex brings its own bubblewrap. A loop records the level it
started with (`State.wall`); anything short of "on" is unguarded, and says so.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hosts.wall import Level, Prereqs, WallSpec, check_wall_prereqs
from .paths import state_home
from .seatbelt import seatbelt_note, unguarded, with_seatbelt

__all__ = ["HostWall", "host_wall", "seatbelt_note", "unguarded", "with_seatbelt"]

# Where each system keeps Claude Code's managed (policy) settings: the one layer besides
# `--settings` that makes its sandbox strict.
CLAUDE_MANAGED = {
    "linux": Path("/etc/claude-code/managed-settings.json"),
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}
CODEX_SYSTEM = Path("/etc/codex/config.toml")
NOT_STRICT = "not strict"
FIX_WALL = "autopilot-codex install --wall"


@dataclass(frozen=True)
class HostWall:
    """One host's wall: its level, each missing piece, and the commands that fix them."""

    host: str
    level: Level
    missing: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()

    @property
    def walled(self) -> bool:
        return self.level == "on"


def spec_for(worktree: Path, home: Path | None = None) -> WallSpec:
    return WallSpec(
        worktree=worktree, state_home=state_home(), home=home or Path(os.path.expanduser("~"))
    )


def claude_dir(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else home / ".claude"


def codex_home(env: Mapping[str, str], home: Path) -> Path:
    configured = env.get("CODEX_HOME", "").strip()
    return Path(configured).expanduser() if configured else home / ".codex"


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _toml(path: Path) -> dict[str, Any] | None:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10: the config cannot be judged
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def claude_layers(
    worktree: Path, home: Path, env: Mapping[str, str], system: str
) -> dict[str, dict[str, Any]]:
    paths = {
        "managed": CLAUDE_MANAGED.get(system),
        "local": worktree / ".claude" / "settings.local.json",
        "project": worktree / ".claude" / "settings.json",
        "user": claude_dir(env, home) / "settings.json",
    }
    layers = {}
    for name, path in paths.items():
        doc = _json(path) if path is not None else None
        if doc is not None:
            layers[name] = doc
    return layers


def codex_layers(worktree: Path, home: Path, env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    paths = {
        "project": worktree / ".codex" / "config.toml",
        "user": codex_home(env, home) / "config.toml",
        "system": CODEX_SYSTEM,
    }
    layers = {}
    for name, path in paths.items():
        doc = _toml(path)
        if doc is not None:
            layers[name] = doc
    return layers


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
    caller itself passes to the host (`claude --settings`, `codex -c`), if any."""
    environ = os.environ if env is None else env
    name = (system or platform.system()).lower()
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    spec = spec_for(worktree, home)
    prereqs = check_wall_prereqs(name, which) if which else check_wall_prereqs(name)
    if host == "codex":
        from .hosts import codex_boundary

        layers = codex_layers(worktree, home, environ)
        if flag is not None:
            layers["overrides"] = dict(flag)
        status = codex_boundary.effective_status(spec, layers)
        # Codex brings its own bubblewrap; only a system without any sandbox stops it.
        usable = name in ("linux", "darwin")
        fixes = [] if status.level == "on" else [_codex_fix(environ, home)]
    else:
        from .hosts import claude_boundary

        layers = claude_layers(worktree, home, environ, name)
        if flag is not None:
            layers["flag"] = dict(flag)
        status = claude_boundary.effective_status(spec, layers)
        usable = prereqs.ok
        fixes = _claude_fixes(status.missing, name)
    missing = list(status.missing)
    level: Level = status.level
    if not usable:
        level = "off"
        missing = [*_prereq_missing(prereqs), *missing]
        if prereqs.fix:
            fixes = [prereqs.fix, *fixes]
    return HostWall(host, level, tuple(missing), tuple(fixes))


def _prereq_missing(prereqs: Prereqs) -> list[str]:
    out = [f"{tool} is not installed: the sandbox cannot start" for tool in prereqs.missing]
    return out + list(prereqs.notes)


def _claude_fixes(missing: tuple[str, ...], system: str) -> list[str]:
    fixes = []
    if any(not m.startswith(NOT_STRICT) for m in missing):
        fixes.append(
            f"`{FIX_WALL}` writes the boundary into ~/.claude/settings.json (a backup is kept)"
        )
    if any(m.startswith(NOT_STRICT) for m in missing):
        managed = CLAUDE_MANAGED.get(system, "managed settings")
        fixes.append(
            f"for a wall no repository can loosen, put the same `sandbox` and `permissions` "
            f"into {managed} (as an administrator), or run the loop in rounds "
            "(`autopilot-codex run`, which passes the boundary to each round)"
        )
    return fixes


def _codex_fix(env: Mapping[str, str], home: Path) -> str:
    config = codex_home(env, home) / "config.toml"
    return f"`autopilot-codex doctor --wall` prints the lines to put at the top of {config}"


def headline(wall: HostWall, *, limit: int = 8) -> str:
    """`plan`'s lines: "walled", or UNGUARDED with each missing piece and its fix."""
    label = "Claude Code" if wall.host == "claude" else "Codex"
    if wall.walled:
        return f"Wall: walled ({label}'s sandbox holds the implementer in)."
    how = "partly walled" if wall.level == "partly" else "no sandbox"
    lines = [
        f"UNGUARDED ({how}, {label}): the implementer can reach what the rails cannot see; "
        "the rails are a seatbelt, not a wall. Missing:"
    ]
    lines += [f"  - {m}" for m in wall.missing[:limit]]
    if len(wall.missing) > limit:
        lines.append(f"  ... and {len(wall.missing) - limit} more (`autopilot-codex doctor`)")
    lines += [f"Fix: {f}" for f in wall.fixes]
    return "\n".join(lines)


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
