"""Claude Code's wall in the user's own settings (`install`, `doctor --wall`), never written
silently: the file is backed up first and what was written is shown.

The boundary names each worktree's own paths (`.git/config`, `.claude`, ...): written outside
a repository, it holds the rest, and `plan` adds a repository's paths when a loop starts there
(`commands/wall_install.extend`). The user's settings hold the boundary for every session, but
not strictly: a repository's own `.claude/settings.json` can still loosen it
(docs/hosts-sandbox.md), which `plan` reports.

Each write records what it changed (`RECORD`, in the state home, out of the implementer's
reach), so `uninstall claude` takes back exactly that: an entry the user had before, or a
value the user changed since, stays.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import surrogates
from ...errors import BridgeError
from ...fileio import atomic_write
from ...paths import state_home

# What the wall changed in which settings file: {file: [change, ...]}, in the order made. A
# change is {"at": keys, "entry": e} (e added to the list at `at`) or {"at": keys, "value": v}
# with "before" when the key held another value.
RECORD = "claude-wall.json"


def merged(current: Mapping[str, Any], boundary: Mapping[str, Any]) -> dict[str, Any]:
    """The user's settings with the boundary laid over them: its `changes`, made on a copy."""
    out: dict[str, Any] = json.loads(json.dumps(current))
    for change in json.loads(json.dumps(changes(current, boundary))):  # nothing shared
        *parents, key = change["at"]
        place = out
        for name in parents:
            place = place[name]
        if "entry" in change:
            place[key].append(change["entry"])
        else:
            place[key] = change["value"]
    return out


def changes(
    current: Mapping[str, Any], boundary: Mapping[str, Any], at: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """What laying the boundary over `current` changes, one record each: tables merge, lists
    gain the boundary's entries (the user's own stay), single values take the boundary's."""
    out: list[dict[str, Any]] = []
    for key, value in boundary.items():
        mine = current.get(key)
        where = [*at, key]
        if key not in current and isinstance(value, (Mapping, list)):
            # Created empty, then filled: each entry comes back out alone, and the table or
            # list goes only when nothing of the user's joined it since.
            mine = {} if isinstance(value, Mapping) else []
            out.append({"at": where, "value": mine})
        if isinstance(value, Mapping) and isinstance(mine, Mapping):
            out += changes(mine, value, (*at, key))
        elif isinstance(value, list) and isinstance(mine, list):
            out += [{"at": where, "entry": v} for v in value if v not in mine]
        elif key not in current:
            out.append({"at": where, "value": value})
        elif mine != value:
            out.append({"at": where, "value": value, "before": mine})
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
            loaded = surrogates.loads(target.read_text(encoding="utf-8"))
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
    # Recorded first: a change recorded but never made is skipped by `unwall`.
    _remember(target, changes(current, boundary))
    _write_json(target, merged(current, boundary))
    which = (
        f"for {worktree}" if worktree else "(a repository's own paths join it at its first plan)"
    )
    return [*lines, f"Wrote the wall {which} into {target}:", json.dumps(boundary, indent=2)]


def lines(boundary: Mapping[str, Any], target: Path, worktree: Path | None) -> list[str]:
    """`install`'s report of the wall it wrote, or found in place."""
    return write(boundary, target, worktree) or [
        f"The wall{f' for {worktree}' if worktree else ''} is already in {target}."
    ]


def unwall() -> list[str]:
    """`uninstall claude`: take back what the wall changed in each settings file, one line
    each; a value the user changed since stays."""
    record = state_home() / RECORD
    made = _read(record)
    if made is None:
        return ["  wall: no record of one written by install; your Claude Code settings are left"]
    lines = [_undo(Path(name), done) for name, done in made.items()]
    record.unlink()
    return lines


def _undo(target: Path, done: list[dict[str, Any]]) -> str:
    current = _read(target)
    if current is None:
        return f"  wall: {target} is gone; nothing to remove"
    kept = sum(not _take_back(current, change) for change in reversed(done))
    _write_json(target, current)
    since = f" (kept {kept} value(s) you changed since)" if kept else ""
    return f"  wall: removed the entries install and plan added to {target}{since}"


def _take_back(doc: Any, change: Mapping[str, Any]) -> bool:
    """Undo one change in `doc`, in place; False when the user changed that value since (an
    entry or key already gone needs nothing)."""
    *parents, key = change["at"]
    for name in parents:
        doc = doc.get(name, {}) if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or key not in doc:
        return doc is not None
    if "entry" in change:
        if isinstance(doc[key], list) and change["entry"] in doc[key]:
            doc[key].remove(change["entry"])
        return True
    now, made = doc[key], change["value"]
    if now != made:
        # A table or list the wall created, filled by the user since, is the user's now.
        return isinstance(made, (dict, list)) and type(now) is type(made)
    if "before" in change:
        doc[key] = change["before"]
    else:
        del doc[key]
    return True


def _read(path: Path) -> Any:
    """A JSON file's content; None when there is no file."""
    try:
        return surrogates.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise BridgeError(f"cannot read {path} as JSON ({exc})") from exc


def _remember(target: Path, done: list[dict[str, Any]]) -> None:
    record = state_home() / RECORD
    made = _read(record) or {}
    made[str(target)] = [*made.get(str(target), []), *done]
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(record, json.dumps(made, indent=2) + "\n")


def _write_json(target: Path, data: Mapping[str, Any]) -> None:
    """The settings through one rename, keeping the file's own permissions."""
    atomic_write(target, json.dumps(data, indent=2) + "\n", keep_mode=True)
