"""`install` (guarded by default; `doctor --wall`): write the wall into the user's Claude Code
settings, never silently: the file is backed up first and what was written is shown. For Codex,
the lines for `config.toml` are printed, not written.

The boundary names each worktree's own paths (`.git/config`, `.claude`, ...): `install` run
outside a repository writes the rest, and records that the user chose the wall (`consent`), so
`plan` adds a repository's paths when a loop starts there (`extend`). `install --unguarded`
takes the choice back and writes nothing.

The user's settings hold the boundary for every session, but not strictly: a repository's own
`.claude/settings.json` can still loosen it (docs/hosts-sandbox.md), which `plan` reports.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import BridgeError
from ..hosts.claude.boundary import boundary_settings, claude_dir
from ..hosts.codex.boundary import boundary_overrides, codex_home
from ..hostwall import HostWall, host_wall, spec_for
from ..paths import state_home
from ..wall import sandbox_usable

# A worktree no boundary can name: its paths are what a boundary without a repository leaves out.
_NOWHERE = Path("/autopilot-codex-no-worktree")


def merged(current: Mapping[str, Any], boundary: Mapping[str, Any]) -> dict[str, Any]:
    """The user's settings with the boundary laid over them: tables merge, lists gain the
    boundary's entries (the user's own stay), single values take the boundary's."""
    out = dict(current)
    for key, value in boundary.items():
        mine = out.get(key)
        if isinstance(value, Mapping) and isinstance(mine, Mapping):
            out[key] = merged(mine, value)
        elif isinstance(value, list) and isinstance(mine, list):
            out[key] = [*mine, *(v for v in value if v not in mine)]
        else:
            out[key] = value
    return out


def _settings(environ: Mapping[str, str]) -> tuple[Path, Path]:
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    return home, claude_dir(environ, home) / "settings.json"


def claude_boundary(worktree: Path | None, home: Path) -> dict[str, Any]:
    """The boundary for `worktree`; without one, everything but a worktree's own paths."""
    if worktree is not None:
        return boundary_settings(spec_for(worktree, home))
    return _without(boundary_settings(spec_for(_NOWHERE, home)), str(_NOWHERE))


def _without(doc: Mapping[str, Any], needle: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if isinstance(value, Mapping):
            out[key] = _without(value, needle)
        elif isinstance(value, list):
            out[key] = [v for v in value if not (isinstance(v, str) and needle in v)]
        else:
            out[key] = value
    return out


def write_claude(worktree: Path | None, env: Mapping[str, str] | None = None) -> list[str]:
    """Lay the boundary over the user's settings; what was done, in lines (empty: the settings
    already hold it, nothing was written)."""
    environ = os.environ if env is None else env
    home, target = _settings(environ)
    boundary = claude_boundary(worktree, home)
    current: dict[str, Any] = {}
    lines = []
    if target.exists():
        try:
            loaded = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BridgeError(f"cannot read {target} as JSON ({exc}); nothing was written") from exc
        if not isinstance(loaded, dict):
            raise BridgeError(f"{target} does not hold a JSON object; nothing was written")
        current = loaded
        if merged(current, boundary) == current:
            return []
        backup = target.with_name(f"settings.json.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(target, backup)
        lines.append(f"Backed up {target} to {backup}.")
    _write_json(target, merged(current, boundary))
    which = f"for {worktree}" if worktree else "(a repository's own paths join it at its first plan)"
    lines.append(f"Wrote the wall {which} into {target}:")
    lines.append(json.dumps(boundary, indent=2))
    return lines


def claude_lines(worktree: Path | None, env: Mapping[str, str] | None = None) -> list[str]:
    """`install`'s report of the wall it wrote, or found in place."""
    lines = write_claude(worktree, env)
    if lines:
        return lines
    target = _settings(os.environ if env is None else env)[1]
    return [f"The wall{f' for {worktree}' if worktree else ''} is already in {target}."]


def consent() -> Path:
    """Where `install` records that the user chose the wall (the state home: the implementer
    can neither read nor write it from inside the wall)."""
    return state_home() / "guarded"


def extend(wall: HostWall, worktree: Path, env: Mapping[str, str] | None = None) -> HostWall:
    """`plan` for a Claude Code loop after a guarded install: a repository the wall does not
    name yet gets its paths added (after a backup, said in the plan's output), and the wall is
    judged again. Never where the sandbox cannot start: `failIfUnavailable` would then refuse
    every command of every session."""
    if wall.walled or wall.host != "claude" or not consent().exists():
        return wall
    if not sandbox_usable(True)[0]:
        return wall
    try:
        lines = write_claude(worktree, env)
    except BridgeError as exc:
        return replace(wall, notes=(f"The wall was not added for this repository: {exc}",))
    judged = host_wall("claude", worktree, env=env)
    said = [line[:-1] + "." if line.endswith(":") else line for line in lines[:-1]]
    return replace(judged, notes=tuple(said))


def _write_json(target: Path, data: Mapping[str, Any]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".settings-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2) + "\n")
        Path(tmp).chmod(mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def codex_lines(worktree: Path, env: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if env is None else env
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    config = codex_home(environ, home) / "config.toml"
    overrides = boundary_overrides(spec_for(worktree, home))
    return [
        f"For Codex, put these lines at the top of {config} (before any [table]); they were "
        "not written:",
        *(key.replace("=", " = ", 1) for key in overrides),
        "",
        f"(They name this worktree, {worktree}: run this again in another repository for its "
        "own. Where the file already has a [permissions...] or [shell_environment_policy] "
        "table, put the matching key in that table instead: TOML refuses a table defined twice.)",
    ]


def wall_install(worktree: Path) -> str:
    """`doctor --wall`: the wall for this repository, Claude Code's written, Codex's printed."""
    return "\n".join([*claude_lines(worktree), "", *codex_lines(worktree)])
