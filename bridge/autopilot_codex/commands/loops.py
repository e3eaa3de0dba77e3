"""`autopilot-codex loops`: every loop on this machine, and the pruning of ended ones.

A loop is a folder under `<state home>/projects/`. Pruning removes only such a folder, only a
real directory (a symlink there is never followed, nor one inside: `shutil.rmtree` unlinks
links without descending), only when no index marks it guarded (`active/` or `rails/`), its
state is not running or paused, it holds no lanes run still to go on and no lane's work, and
nothing in it changed for the given age.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import loopfiles
from ..errors import BridgeError
from ..lanes.record import FOLDER as LANES
from ..lanes.record import NAME as LANES_RECORD
from ..lanes.worktrees import lanes_root
from ..paths import INDEXES, state_home
from ..spend import of_files

# Not ended: a running loop is working, a paused one waits for the user's resume.
LIVE = ("running", "paused")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# A lanes run `run --resume` goes on with; its record is `<folder>/lanes/lanes.json`.
LANES_LIVE = ("running", "interrupted")


@dataclass(frozen=True)
class Loop:
    key: str
    worktree: str
    style: str
    status: str
    spend_usd: float
    last_activity: str
    # Both meters and their cap, as every view shows them (`spend.Spend.as_json`).
    spend: dict[str, object]
    guarded: bool
    # Seconds since the last activity, for pruning; not shown.
    age_s: float

    @property
    def ended(self) -> bool:
        return not self.guarded and self.status not in LIVE


def parse_age(value: str) -> float:
    """`7d`, `12h`, `30m`, `90s`, `2w` (a bare number is days) → seconds."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", value or "")
    if found is None:
        raise BridgeError(f"--older-than {value!r}: give an age such as 7d, 12h or 30m")
    return float(found.group(1)) * UNITS[found.group(2) or "d"]


def every(home: Path | None = None, now: float | None = None) -> list[Loop]:
    """The loops under `projects/`, newest activity first; symlinks are skipped, not followed."""
    home = home or state_home()
    projects = home / "projects"
    now = time.time() if now is None else now
    try:
        names = sorted(entry.name for entry in projects.iterdir())
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        folder = projects / name
        if folder.is_symlink() or not folder.is_dir():
            continue
        files = loopfiles.load(folder)
        lanes = _lanes_record(folder)
        active = max(loopfiles.last_activity(folder), _mtime(folder / LANES / LANES_RECORD))
        spent = of_files(files)
        found.append(
            Loop(
                key=name,
                worktree=_worktree(files),
                style=files.style,
                status=_lanes_status(lanes) or files.status,
                spend_usd=round(spent.total, 6),
                spend=spent.as_json(),
                last_activity=time.strftime("%Y-%m-%d %H:%M", time.gmtime(active)),
                guarded=_guarded(home, folder, _worktree(files), lanes),
                age_s=max(0.0, now - active),
            )
        )
    return sorted(found, key=lambda loop: loop.age_s)


def table(loops: list[Loop]) -> str:
    if not loops:
        return "No loops on this machine."
    rows = [("LAST ACTIVITY", "STATUS", "STYLE", "SPEND (MANAGER + IMPLEMENTER)", "WORKTREE")]
    for loop in loops:
        status = loop.status + (" (guarded)" if loop.guarded and loop.status != "running" else "")
        spend = str(loop.spend["short"])
        rows.append((loop.last_activity, status, loop.style, spend, loop.worktree or loop.key))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4]
        for row in rows
    )


def as_json(loops: list[Loop]) -> str:
    return json.dumps([_public(loop) for loop in loops], indent=1, sort_keys=True)


def _public(loop: Loop) -> dict[str, object]:
    data = asdict(loop)
    data.pop("age_s")
    data["ended"] = loop.ended
    return data


def prune(
    older_than: str,
    *,
    dry_run: bool,
    home: Path | None = None,
    now: float | None = None,
    snapshots_only: bool = False,
) -> str:
    """`snapshots_only`: name only the folders that hold a shadow history (to ask first)."""
    age = parse_age(older_than)
    home = home or state_home()
    if (home / "projects").is_symlink():
        return f"Nothing pruned: {home / 'projects'} is a link, not the state home's own folder."
    projects = (home / "projects").resolve()
    chosen = [loop for loop in every(home, now) if loop.ended and loop.age_s >= age]
    if not chosen:
        return f"Nothing to prune: no ended loop is older than {older_than}."
    lines = []
    for loop in chosen:
        folder = projects / loop.key
        # Checked again just before: the folder must still be a real directory in projects/.
        if folder.is_symlink() or folder.resolve().parent != projects:
            continue
        if not _still_ended(home, folder) or not _a_loops(folder):
            continue
        if snapshots_only and not (folder / "shadow.git").is_dir():
            continue
        if not dry_run:
            shutil.rmtree(folder)
        lines.append(
            f"{'would remove' if dry_run else 'removed'} {loop.key} ({loop.status}, {loop.worktree or '?'})"
        )
    return "\n".join(lines) or "Nothing to prune."


def _a_loops(folder: Path) -> bool:
    """A loop's folder holds one of its records; any other folder there is not a loop's."""
    records = (loopfiles.STATE, loopfiles.EVENTS, loopfiles.RESULT, Path(*loopfiles.ROLLOUT))
    return (
        any(os.path.lexists(folder / name) for name in records)
        or (folder / LANES / LANES_RECORD).is_file()
    )


def _still_ended(home: Path, folder: Path) -> bool:
    """Read again just before removing: a loop may have started there since the listing."""
    files = loopfiles.load(folder)
    lanes = _lanes_record(folder)
    if _guarded(home, folder, _worktree(files), lanes):
        return False
    return (_lanes_status(lanes) or files.status) not in LIVE


def _guarded(home: Path, folder: Path, worktree: str, lanes: dict[str, Any] | None) -> bool:
    """An index marks it, its lanes run goes on, or a lane's work is still in a worktree:
    a lane's own loop (its worktree beside the state home), or a lanes run whose lanes
    ended unmerged (their worktrees and branches are kept, and the record names them)."""
    if any(os.path.lexists(home / index / folder.name) for index in INDEXES):
        return True
    if _lanes_status(lanes) in LANES_LIVE:
        return True
    if worktree and Path(worktree).is_relative_to(lanes_root(home)) and Path(worktree).is_dir():
        return True
    tasks = (lanes or {}).get("tasks")
    for task in tasks if isinstance(tasks, list) else []:
        place = task.get("worktree") if isinstance(task, dict) else None
        unmerged = isinstance(place, str) and place and task.get("state") != "merged"
        if unmerged and Path(str(place)).is_dir():
            return True
    return False


def _worktree(files: loopfiles.LoopFiles) -> str:
    return files.worktree or loopfiles.text(files.run_header(), "worktree")


def _lanes_record(folder: Path) -> dict[str, Any] | None:
    return loopfiles.read_json(folder / LANES / LANES_RECORD)


def _lanes_status(lanes: dict[str, Any] | None) -> str:
    status = (lanes or {}).get("status")
    return status if isinstance(status, str) and status in LANES_LIVE else ""


def _mtime(path: Path) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0
