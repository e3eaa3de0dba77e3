"""The shadow at the loop's hooks: what each event snapshots, the turn it marks, and what it
says when work vanished.

PostToolUse of a tool that only looks snapshots nothing; an edit tool that names its files
stages only those; anything else (a shell command above all) snapshots the whole tree. A loss
is told at once to the ledger (`work.lost`) and kept for the Stop, which tells the manager
(`lost_at_stop`, in the verdict) and the user (the Stop's message). The turn's last event is
kept (`turn`) so that `restore` knows whether the implementer is mid-turn.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BridgeError
from ..fileio import atomic_write, read_text
from ..output import terminal_command
from . import background, repo
from .record import PENDING, at_point, read_list

if TYPE_CHECKING:
    from ..hookio import HookInput
    from ..host import Host
    from ..store import Store

AT_STOP = "shadow-stop.json"
TURN = "shadow-turn"
LOOKING = frozenset({"Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite"})
BUSY = ("UserPromptSubmit", "PostToolUse", "PostToolUseFailure")
EVENTS = (*BUSY, "Stop")


def at_hook(payload: HookInput, worktree: Path, host: Host, lock_timeout: float) -> str:
    """`on_hook` for the entrance, which builds no store: the shadow's own, for the loop's
    folder and the snapshot's worker (`background.spawn`)."""
    if payload.event not in EVENTS:
        return ""
    from ..store import Store

    return on_hook(payload, Store(worktree, lock_timeout=lock_timeout), host)


def on_hook(payload: HookInput, store: Store, host: Host) -> str:
    """Start this event's snapshot (`background`); the user's line when work vanished (at a
    Stop), else ""."""
    event = payload.event
    if event not in EVENTS:
        return ""
    _mark_turn(store.dir, event)
    tool = payload.tool_name
    if event != "Stop" and tool in host.read_tools | host.question_tools | LOOKING:
        return ""
    paths = None
    if event != "Stop" and tool in host.edit_tools:
        paths = host.touched_paths(tool, payload.tool_input) or None
    said = _at_stop(store) if event == "Stop" else ""
    try:
        background.spawn(store, _point(event, tool), paths)
    except (BridgeError, OSError) as exc:
        failed = f"autopilot-codex: no snapshot of the work tree at this {event}: {exc}"
        return f"{said}\n{failed}" if said else failed
    return said


def before_tool(worktree: Path, tool: str, host: Host, timeout: float) -> None:
    """A tool that can change files waits for the snapshot still being written (the last
    one's, started in the background): it must not run over a tree not yet kept. Past
    `timeout` (a loop's first snapshot of a very large tree) it goes on, unprotected."""
    if tool in host.read_tools | host.question_tools | LOOKING:
        return
    with contextlib.suppress(BridgeError, OSError):
        shadow = repo.at(worktree)
        if (shadow.dir.parent / "shadow.lock").exists():
            repo.settle(shadow, timeout)


def _at_stop(store: Store) -> str:
    """What this turn lost, once every snapshot of it is written: kept for the verdict
    (`lost_at_stop`) and told to the user."""
    with contextlib.suppress(BridgeError, OSError):
        repo.settle(repo.at(store.worktree, store.home), store.lock_timeout)
    pending = read_list(store.dir / PENDING)
    if pending != read_list(store.dir / AT_STOP):
        atomic_write(store.dir / AT_STOP, json.dumps(pending), sync=False)
    if not pending:
        return ""
    (store.dir / PENDING).unlink(missing_ok=True)
    return told(pending)


def told(lost: list[str]) -> str:
    shown = "; ".join(lost[:10]) + (f"; and {len(lost) - 10} more" if len(lost) > 10 else "")
    restore = terminal_command("restore")
    return (
        f"autopilot-codex: work vanished this turn that no commit holds: {shown}. "
        f"`{restore} --list` shows the snapshots; `{restore} <id>` brings one back."
    )


def lost_lines(events: list[dict[str, Any]], shown: int = 3) -> list[str]:
    """For `status`: the last losses the ledger holds (`work.lost`), each with its restore."""
    found = [e for e in events if e.get("event") == "work.lost"]
    restore = terminal_command("restore")
    lines = []
    for event in found[-shown:]:
        lost = "; ".join(str(x) for x in event.get("lost") or [])
        lines.append(
            f"Work lost ({event.get('ts', '?')}): {lost} — `{restore} {event.get('snapshot')}`"
        )
    return lines


def lost_count(events: list[dict[str, Any]]) -> int:
    """For `watch`: how many losses the ledger holds."""
    return sum(len(e.get("lost") or []) for e in events if e.get("event") == "work.lost")


def lost_at_stop(folder: Path) -> list[str]:
    """What the Stop being answered found lost this turn (written by `on_hook` before it)."""
    return read_list(folder / AT_STOP)


def mid_turn(folder: Path) -> bool:
    """Whether the last hook seen was inside a turn (no Stop after it)."""
    return (read_text(folder / TURN) or "").strip() in BUSY


def _mark_turn(folder: Path, event: str) -> None:
    if (read_text(folder / TURN) or "").strip() != event:
        atomic_write(folder / TURN, event, sync=False)


def _point(event: str, tool: str) -> str:
    return f"{event} {tool}" if tool else event


def at_start(store: Store, point: str) -> str:
    """The loop's first snapshot (plan, ralph, a round): "" or why there is none. What the
    user changed between loops is theirs, not a loss."""
    try:
        # In the worker: a first snapshot hashes every file (seconds on a large tree).
        background.spawn(store, point, None, notice=False)
    except (BridgeError, OSError) as exc:
        return f"No snapshot of the work tree at the start: {exc}"
    return ""


def at_round(store: Store, point: str, note: Callable[[str], None]) -> None:
    """Before and after each round of `run`: what a round made vanish is told as it ends."""
    try:
        lost = at_point(store, point)
    except (BridgeError, OSError) as exc:
        note(f"no snapshot of the work tree at {point}: {exc}")
        return
    if lost:
        note(told(list(lost)))
