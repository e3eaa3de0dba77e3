"""`autopilot-codex logs`: the loop's ledger as readable lines, and followed while it runs."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import surrogates
from ..loopfiles import read_bytes, text
from ..spend import charged, usd

if TYPE_CHECKING:
    from ..lanes.record import LanesRun

T = TypeVar("T")
NO_LANES = "No lanes run here: `run --lanes N` starts one."
# How often `-f` looks at the file: a new line shows within this, at a stat per poll.
POLL_S = 0.25
# The fields a line shows on its own; the rest are kept for --json.
SHOWN = ("ts", "event", "decision", "reason", "cost_usd", "charged_usd")


def line(record: dict[str, Any]) -> str:
    """time, event, decision, reason, cost: one line, whatever else the record holds."""
    when = text(record, "ts")[:19].replace("T", " ")
    parts = [when, text(record, "event", "?")]
    if decision := text(record, "decision"):
        parts.append(f"[{decision}]")
    if reason := text(record, "reason") or text(record, "line") or text(record, "error"):
        parts.append(" ".join(reason.split())[:200])
    if cost := charged(record):
        parts.append(usd(cost))
    return " ".join(parts)


def show(record: dict[str, Any], as_json: bool) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True) if as_json else line(record)


def snapshot(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The ledger's complete lines now, and the offset just past them (where `-f` goes on)."""
    data = read_bytes(path)
    if data is None:
        return [], 0
    offset = data.rfind(b"\n") + 1
    records: list[dict[str, Any]] = []
    for raw in data[:offset].splitlines():
        _emit_raw(raw, records.append)
    return records, offset


def logs(path: Path, *, as_json: bool = False, last: int | None = None) -> tuple[str, int]:
    records, offset = snapshot(path)
    return "\n".join(show(r, as_json) for r in tail(records, last)), offset


def tail(found: list[T], last: int | None) -> list[T]:
    if last is None:
        return found
    return found[-last:] if last > 0 else []


def lanes_story(cwd: str) -> str:
    """The lanes run of the repository here as its events ('' when it never ran lanes)."""
    from ..lanes.view import here, story

    return "\n".join(here(cwd, story))


def lane_text(cwd: str, task_id: str, last: int | None) -> str:
    """One lane's own log (its rounds' progress lines), or why there is none to show."""
    from ..gitrepo import toplevel
    from ..lanes.view import use

    root = toplevel(Path(cwd))
    found = use(root, lambda run: _lane(root, run, task_id, last))
    return found if found is not None else NO_LANES


def _lane(root: Path, run: LanesRun, task_id: str, last: int | None) -> str:
    from ..lanes.view import lane_log

    task = next((t for t in run.tasks if t.id == task_id), None)
    if task is None:
        ids = ", ".join(t.id for t in run.tasks) or "none"
        return f"No lane {task_id!r} in lanes run {run.run} (its tasks: {ids})."
    where = lane_log(root, run, task_id)
    data = read_bytes(where)
    if not data:
        return f"Lane {task_id} ({task.state}) has written no log yet."
    lines = data.decode(errors="replace").splitlines()
    return "\n".join([f"Lane {task_id} ({task.state}), {where}:", *tail(lines, last)])


def follow(
    path: Path,
    emit: Callable[[dict[str, Any]], None],
    *,
    offset: int = 0,
    polls: int | None = None,
    sleep: Callable[[float], None] | None = None,
    interval: float = POLL_S,
) -> None:
    """Emit each complete line appended to `path` past `offset`, for `polls` looks (None:
    until Ctrl-C). A file cut shorter than what was read (truncated) is read again from its
    start; one replaced by another (rotated: a new inode) too; a missing file is waited for.
    A line without its newline yet is held until it has one."""
    held = b""
    # Looked up at the call, not bound at import: a test drives the polls through it.
    pause = sleep or time.sleep
    first = _stat(path)
    inode = first.st_ino if first is not None else None
    count = 0
    while polls is None or count < polls:
        count += 1
        if (info := _stat(path)) is not None:
            if inode is not None and (info.st_ino != inode or info.st_size < offset):
                offset, held = 0, b""
            inode = info.st_ino
            if info.st_size > offset:
                with path.open("rb") as handle:
                    handle.seek(offset)
                    chunk = handle.read()
                offset += len(chunk)
                *complete, held = (held + chunk).split(b"\n")
                for raw in complete:
                    _emit_raw(raw, emit)
        if polls is None or count < polls:
            pause(interval)


def _stat(path: Path) -> os.stat_result | None:
    """The file's own status when it is a regular file: a link or a FIFO is not followed."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def _emit_raw(raw: bytes, emit: Callable[[dict[str, Any]], None]) -> None:
    try:
        record = surrogates.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return
    if isinstance(record, dict):
        emit(record)
