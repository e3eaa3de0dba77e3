"""`install --wall` (`doctor --wall`): write the wall into the user's Claude Code settings, never
silently: the file is backed up first and what was written is shown. For Codex, the lines for
`config.toml` are printed, not written.

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
from pathlib import Path
from typing import Any

from ..errors import BridgeError
from ..guarded import spec_for
from ..hosts.claude.boundary import boundary_settings, claude_dir
from ..hosts.codex.boundary import boundary_overrides, codex_home


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


def write_claude(worktree: Path, env: Mapping[str, str] | None = None) -> list[str]:
    environ = os.environ if env is None else env
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    target = claude_dir(environ, home) / "settings.json"
    boundary = boundary_settings(spec_for(worktree, home))
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
        backup = target.with_name(f"settings.json.{time.strftime('%Y%m%d-%H%M%S')}.bak")
        shutil.copy2(target, backup)
        lines.append(f"Backed up {target} to {backup}.")
    _write_json(target, merged(current, boundary))
    lines.append(f"Wrote the wall for {worktree} into {target}:")
    lines.append(json.dumps(boundary, indent=2))
    return lines


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
    return "\n".join([*write_claude(worktree), "", *codex_lines(worktree)])
