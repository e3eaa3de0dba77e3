"""Claude Code's wall in the user's own settings (`install`, `doctor --wall`), never written
silently: the file is backed up first and what was written is shown.

The boundary names each worktree's own paths (`.git/config`, `.claude`, ...): written outside
a repository, it holds the rest, and `plan` adds a repository's paths when a loop starts there
(`commands/wall_install.extend`). The user's settings hold the boundary for every session, but
not strictly: a repository's own `.claude/settings.json` can still loosen it
(docs/hosts-sandbox.md), which `plan` reports.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import BridgeError
from ...fileio import atomic_write


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


def without(doc: Mapping[str, Any], needle: str) -> dict[str, Any]:
    """`doc` without the entries that name `needle` (a worktree that stands for none)."""
    out: dict[str, Any] = {}
    for key, value in doc.items():
        if isinstance(value, Mapping):
            out[key] = without(value, needle)
        elif isinstance(value, list):
            out[key] = [v for v in value if not (isinstance(v, str) and needle in v)]
        else:
            out[key] = value
    return out


def write(boundary: Mapping[str, Any], target: Path, worktree: Path | None) -> list[str]:
    """Lay the boundary over the user's settings in `target`; what was done, in lines (empty:
    the settings already hold it, nothing was written)."""
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
    which = (
        f"for {worktree}" if worktree else "(a repository's own paths join it at its first plan)"
    )
    lines.append(f"Wrote the wall {which} into {target}:")
    lines.append(json.dumps(boundary, indent=2))
    return lines


def lines(boundary: Mapping[str, Any], target: Path, worktree: Path | None) -> list[str]:
    """`install`'s report of the wall it wrote, or found in place."""
    done = write(boundary, target, worktree)
    if done:
        return done
    return [f"The wall{f' for {worktree}' if worktree else ''} is already in {target}."]


def _write_json(target: Path, data: Mapping[str, Any]) -> None:
    """The settings through one rename, keeping the file's own permissions."""
    atomic_write(target, json.dumps(data, indent=2) + "\n", keep_mode=True)
