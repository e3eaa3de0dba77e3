"""`autopilot-codex watch`: a live view of the loops on this machine, and a word when one falls
silent.

It reads the loops' files with the tolerant readers (`loopfiles`) and never writes a state. The
one thing it writes is a typed ledger event, `watch.silent`, once per silence: appended through
the loop's own `Store` under its lock, so the sealed ledger stays valid. Silence is a running
loop with no ledger event (other than the watch's own) for `--silence`, or a manager call in
flight past its deadline. Each silence is also told to the user (`notify`), never blocking.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import loopfiles, session_end
from ..lanes.record import FOLDER as LANES
from ..paths import project_dir, state_home
from ..shadow.hook import lost_count
from ..spend import of_files
from .loops import every, parse_age

SILENT = "watch.silent"
COLUMNS = ("STATUS", "STYLE", "TASK", "LAST EVENT", "IN FLIGHT", "METERS", "HOOK", "WORKTREE")


@dataclass(frozen=True)
class Row:
    key: str
    worktree: str
    style: str
    status: str
    task: str
    last_event: str
    # Seconds since the last event that was not the watch's own (None: the ledger is empty).
    last_event_age_s: float | None
    inflight: str
    meters: dict[str, str]
    # Seconds since the state was last written (a hook that changed anything writes it).
    last_hook_age_s: float | None
    # Why the loop looks silent, one short reason each; empty when it does not.
    silent: list[str] = field(default_factory=list)
    # Those reasons the ledger already holds a `watch.silent` (or `session.ended`) for.
    recorded: list[str] = field(default_factory=list)
    # Seconds since the session's transcript was written (None: no transcript known).
    transcript_age_s: float | None = None
    # Both meters and their cap (`spend.Spend.as_json`), for --json.
    spend: dict[str, Any] = field(default_factory=dict)
    # Files, branches and stash entries the shadow history saw vanish (`restore` has them).
    lost: int = 0


def _epoch(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _mtime(path: Path) -> float | None:
    with contextlib.suppress(OSError):
        return path.lstat().st_mtime
    return None


def _meters(files: loopfiles.LoopFiles) -> dict[str, str]:
    state = files.state
    # Both meters and their total, as every view shows them (`spend`).
    meters = {"spend": of_files(files).text()}
    if files.style == "rounds":
        # A run counts rounds, not the held loop's iterations (which stay 0): "rounds 2/3".
        used = sum(1 for r in files.rounds() if loopfiles.text(r, "outcome") == "ok")
        meters["rounds"] = f"{used}/{int(loopfiles.number(files.run_header(), 'rounds'))}"
    elif "max_iterations" in state:
        meters["iterations"] = (
            f"{int(loopfiles.number(state, 'iteration'))}/"
            f"{int(loopfiles.number(state, 'max_iterations'))}"
        )
    if "consultations_total" in state:
        meters["asked"] = str(int(loopfiles.number(state, "consultations_total")))
    return meters


def _inflight(state: dict[str, Any], now: float) -> tuple[str, list[str]]:
    """What manager calls are in flight, and those past their deadline."""
    shown, overdue = [], []
    calls = [state["inflight"]] if isinstance(state.get("inflight"), dict) else []
    calls += loopfiles.items(state, "reservations")
    for call in calls:
        kind = loopfiles.text(call, "kind") or "call"
        deadline = loopfiles.number(call, "deadline")
        late = bool(deadline) and deadline < now
        shown.append(kind + (" (overdue)" if late else ""))
        if late:
            overdue.append(f"{kind} past its deadline")
    return ", ".join(shown), overdue


def _transcript(state: dict[str, Any]) -> Path | None:
    """The session's transcript, as the host named it in a hook payload (the last one the
    implementer's spend was read from). Only its time is looked at, never its content."""
    cursors = loopfiles.items(state, "spend_cursors")
    path = loopfiles.text(cursors[-1], "path") if cursors else ""
    return Path(path) if path.startswith("/") else None


def _ended(events: list[dict[str, Any]], state: dict[str, Any]) -> str:
    """Why the owner's session ended while the loop ran, when its SessionEnd said so."""
    last = next((e for e in reversed(events) if e.get("event") == session_end.EVENT), None)
    owner = state.get("session_id")
    if last is None or not owner or last.get("session") != owner:
        return ""
    return f"session ended ({loopfiles.text(last, 'reason') or 'unknown'}) without a Stop"


def row_of(key: str, folder: Path, *, now: float, silence_s: float) -> Row:
    files = loopfiles.load(folder)
    own = [e for e in files.events if loopfiles.text(e, "event") != SILENT]
    last = own[-1] if own else {}
    when = _epoch(last.get("ts")) if last else None
    if last and when is None:
        when = _mtime(folder / loopfiles.EVENTS)
    age = None if when is None else max(0.0, now - when)
    written = _mtime(folder / loopfiles.STATE)
    transcript = _transcript(files.state)
    touched = _mtime(transcript) if transcript is not None else None
    transcript_age = None if touched is None else max(0.0, now - touched)
    inflight, silent = _inflight(files.state, now)
    running = files.status == "running"
    ended = _ended(files.events, files.state) if running else ""
    if ended:
        silent.insert(0, ended)
    # The session shows life by a hook (a ledger event) or by its host writing its transcript.
    alive = min((a for a in (age, transcript_age) if a is not None), default=None)
    if running and (alive is None or alive >= silence_s):
        what = "ledger event" + (" or transcript write" if transcript_age is not None else "")
        silent.insert(
            1 if ended else 0, f"no {what} yet" if alive is None else f"no {what} for {_age(alive)}"
        )
    # A reason counts as recorded when a `watch.silent` for it follows the last own event.
    tail = files.events[files.events.index(last) + 1 :] if last else files.events
    said = {loopfiles.text(e, "kind") for e in tail if loopfiles.text(e, "event") == SILENT}
    said.add("session_end")
    task = files.state.get("current_task")
    return Row(
        key=key,
        worktree=files.worktree or loopfiles.text(files.run_header(), "worktree"),
        style=files.style,
        status=files.status,
        task=task if isinstance(task, str) else "",
        last_event=loopfiles.text(last, "event"),
        last_event_age_s=None if age is None else round(age, 1),
        inflight=inflight,
        meters=_meters(files),
        spend=of_files(files).as_json(),
        last_hook_age_s=None if written is None else round(max(0.0, now - written), 1),
        silent=silent,
        recorded=[r for r in silent if _kind(r) in said],
        transcript_age_s=None if transcript_age is None else round(transcript_age, 1),
        lost=lost_count(files.events),
    )


def _kind(reason: str) -> str:
    if reason.startswith("session ended"):
        return "session_end"
    return "overdue" if "deadline" in reason else "quiet"


def rows(
    *, home: Path | None = None, now: float | None = None, silence_s: float, here: str | None
) -> list[Row]:
    home = home or state_home()
    now = time.time() if now is None else now
    found = []
    for loop in every(home, now):
        folder = home / "projects" / loop.key
        if here is not None and loop.key != project_dir(Path(here), home).name:
            continue
        # A repository whose lanes ran and no loop of its own: its lanes show below the loops.
        if {p.name for p in folder.iterdir()} == {LANES}:
            continue
        found.append(row_of(loop.key, folder, now=now, silence_s=silence_s))
    return found


def record(row: Row, *, home: Path | None = None) -> list[str]:
    """Append one `watch.silent` per new reason to the loop's sealed ledger; the reasons told."""
    from ..config import load_config
    from ..store import Store

    new = [r for r in row.silent if r not in row.recorded]
    if not new or not row.worktree:
        return []
    home = home or state_home()
    # Only the store of the folder the row was read from: a state naming another worktree
    # never makes the watch write to that worktree's ledger.
    if project_dir(Path(row.worktree), home).name != row.key:
        return []
    store = Store(Path(row.worktree), home=home, lock_timeout=load_config().lock_timeout_s)
    with store.locked():
        for reason in new:
            store.append_event(SILENT, kind=_kind(reason), reason=reason, status=row.status)
    return new


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def table(found: list[Row]) -> Any:
    from rich.table import Table

    grid = Table(title="autopilot-codex loops", expand=True)
    for name in COLUMNS:
        grid.add_column(name, overflow="fold")
    for row in found:
        status = row.status + (" SILENT: " + "; ".join(row.silent) if row.silent else "")
        status += f" WORK LOST: {row.lost} (restore --list)" if row.lost else ""
        grid.add_row(
            f"[bold red]{status}[/]" if row.silent else status,
            row.style,
            row.task or "-",
            f"{row.last_event or '-'} ({_age(row.last_event_age_s)} ago)",
            row.inflight or "-",
            " ".join(f"{k} {v}" for k, v in row.meters.items()) or "-",
            f"{_age(row.last_hook_age_s)} ago",
            row.worktree or row.key,
        )
    if not found:
        grid.add_row("no loops", *[""] * (len(COLUMNS) - 1))
    return grid


def frame(found: list[Row], width: int | None = None, lanes: list[str] | None = None) -> str:
    import shutil

    from rich.console import Console

    width = width or max(100, shutil.get_terminal_size((160, 40)).columns)
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(shown(found, lanes or []))
    return console.export_text().rstrip()


def shown(found: list[Row], lanes: list[str]) -> Any:
    """The loops' table and, below it, the lanes run of the repository here (each lane and
    the queue), as plain text: a task's title is never read as markup."""
    from rich.console import Group
    from rich.text import Text

    return Group(table(found), *[Text(line) for line in lanes])


def lanes_here(cwd: str | None) -> list[str]:
    """The last lanes run of the repository holding `cwd` (None: no repository asked for),
    then the fleet's runs when a shared database is set."""
    from ..lanes.view import here
    from ..lanes.view import table as lanes_table
    from .fleet import fleet_lines

    return [*(here(cwd, lanes_table) if cwd is not None else []), *fleet_lines()]


def as_json(found: list[Row]) -> str:
    return json.dumps([asdict(r) for r in found], indent=1, sort_keys=True)


def sweep(found: list[Row], home: Path | None = None) -> list[str]:
    """Record and tell each new silence, and return what was told; a failure to tell never
    stops the watch. (A loop's status changes are told by the hook that makes them,
    `announce`, not here.)"""
    from ..notify import notify

    told = []
    for row in found:
        for reason in record(row, home=home):
            message = f"autopilot-codex: {row.worktree or row.key}: {reason}"
            notify(
                {"event": SILENT, "worktree": row.worktree, "status": row.status, "reason": reason},
                message,
            )
            told.append(message)
    return told


def terminal_notice(message: str) -> str:
    """The terminal's own notification sequences (OSC 9, and OSC 777 for the terminals that
    take that one); a terminal that knows neither ignores them. Control characters are
    dropped so that no text can end the sequence early or start another."""
    clean = "".join(c for c in message if c.isprintable() and c != ";")[:200]
    return f"\x1b]9;{clean}\x07\x1b]777;notify;autopilot-codex;{clean}\x07"


def watch(
    *,
    once: bool,
    as_json_out: bool,
    silence: str,
    here: str | None,
    every_s: float,
    cwd: str | None = None,
) -> str:
    """The loops' view; with `cwd`, the lanes run of its repository below the loops."""
    silence_s = parse_age(silence if silence[-1:].isalpha() else silence + "s")
    if once or as_json_out:
        found = rows(silence_s=silence_s, here=here)
        sweep(found)
        return as_json(found) if as_json_out else frame(found, lanes=lanes_here(cwd))
    from rich.live import Live

    found = rows(silence_s=silence_s, here=here)
    with Live(shown(found, lanes_here(cwd)), refresh_per_second=1, screen=False) as live:
        try:
            while True:
                for message in sweep(found):
                    live.console.file.write(terminal_notice(message))
                live.update(shown(found, lanes_here(cwd)))
                time.sleep(every_s)
                found = rows(silence_s=silence_s, here=here)
        except KeyboardInterrupt:
            pass
    return ""
