"""Where a loop's files live and how they are written: the lock around a read-modify-write,
atomic writes, the active-loop marker the gate reads, the event ledger, and quarantine of a
file that cannot be trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from . import typedjson, witness
from .errors import BridgeError, LockTimeout, StateCorrupt, permission_denied
from .hosts import terminal_command
from .paths import active_marker, project_dir, rails_marker, state_home
from .state import (
    SCHEMA_VERSION,
    UNLOADED_PLAN,
    Plan,
    State,
    UnloadedPlan,
    migrate,
    now_iso,
    parse_state,
)
from .witness import Witness


class Store:
    """The files of one worktree's loop, under `<home>/projects/<key>/`."""

    def __init__(self, worktree: Path, *, home: Path | None = None, lock_timeout: float = 10.0):
        self.worktree = worktree
        self.home = home or state_home()
        self.dir = project_dir(worktree, self.home)
        self.state_path = self.dir / "state.json"
        self.plan_path = self.dir / "plan.json"
        self.events_path = self.dir / "events.jsonl"
        self.lock_path = self.dir / "state.lock"
        self.witness_path = self.dir / "witness.json"
        # How the last loop ended (ralph): kept after the loop is off, replaced by the next.
        self.result_path = self.dir / "last.json"
        self.marker = active_marker(worktree, self.home)
        # The second index of guarded worktrees (paths.INDEXES): the same marker, kept in step.
        self.rails = rails_marker(worktree, self.home)
        self.lock_timeout = lock_timeout
        self._witness: Witness | None = None

    def excluded(self) -> tuple[str, ...]:
        """The loop's own files, kept out of every diff when the state home sits in the repo."""
        try:
            relative = self.home.resolve().relative_to(self.worktree.resolve())
        except ValueError:
            return ()
        return (str(relative),)

    # -- lock ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive access for a read-modify-write, waiting at most `lock_timeout` seconds."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _acquire(fd, self.lock_timeout)
            try:
                yield
            finally:
                _release(fd)
        finally:
            os.close(fd)

    # -- state --------------------------------------------------------------------------

    def load(self, *, with_plan: bool = True) -> State | None:  # noqa: C901 - one check per way a file can be bad
        """The current state, None when there is none. Corrupt state is moved aside.

        Hooks that never read the plan pass `with_plan=False`: at 500 tasks, reading and
        checking it would be most of their cost.
        """
        self._witness = witness.read(self.witness_path)
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if self._witness is not None and self.guarded() and not self._logged("state.removed"):
                # Nothing writes the file back (peers recreated deleted state,
                # oh-my-claudecode#2085), and the loop drives nothing more, but the rails stay:
                # removing a file must never switch them off. The user's stop ends them.
                self.append_event(
                    "state.removed",
                    decision="rails kept",
                    reason="state.json removed outside the bridge; the rails stay on until stop",
                )
            return None
        except PermissionError as exc:
            # Not corrupt: the file is fine, so it stays where it is (a re-plan costs money).
            raise BridgeError(permission_denied(self.state_path)) from exc
        except (OSError, UnicodeDecodeError) as exc:
            self._quarantine(f"unreadable ({exc})")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            # Some messages end in "at" ("Unterminated string starting at"): say where once.
            problem = exc.msg.removesuffix(" at")
            self._quarantine(f"not valid JSON ({problem} at line {exc.lineno})")
        if isinstance(data, dict) and isinstance(data.get("schema_version"), int):
            version = data["schema_version"]
            if version > SCHEMA_VERSION:
                raise BridgeError(
                    f"{self.state_path} was written by a newer autopilot-codex "
                    f"(schema {version}); update the plugin"
                )
            data = migrate(data)
        inline = data.pop("plan", None) if isinstance(data, dict) else None
        try:
            state = parse_state(data)
        except typedjson.Invalid as exc:
            self._quarantine(str(exc))
        if self._witness is not None and not self._witness.vouches(text):
            self._tampered("state.json was changed", self.state_path)
        if not with_plan:
            return state.evolve(plan=UNLOADED_PLAN)
        return state.evolve(plan=self._load_plan(inline))

    def with_plan(self, state: State) -> State:
        if not isinstance(state.plan, UnloadedPlan):
            return state
        return state.evolve(plan=self._load_plan(None))

    def _load_plan(self, inline: object) -> Plan:
        if inline is None:
            try:
                text = self.plan_path.read_text(encoding="utf-8")
                seen = self._witness
                if seen is not None and seen.plan and witness.digest(text) != seen.plan:
                    self._tampered("plan.json was changed", self.plan_path)
                inline = json.loads(text)
            except FileNotFoundError:
                self._quarantine("without its plan.json")
            except (OSError, ValueError) as exc:
                self._quarantine(f"with an unreadable plan.json ({type(exc).__name__})")
        try:
            return typedjson.load(Plan, inline, "plan")
        except typedjson.Invalid as exc:
            self._quarantine(str(exc))

    def save_plan(self, plan: Plan) -> None:
        """Written once, when a loop is planned, before the state that refers to it."""
        text = json.dumps(typedjson.dump(plan), ensure_ascii=False, indent=1) + "\n"
        _atomic_write(self.plan_path, text)
        # A copy to restore from if plan.json is ever changed by anything but the bridge.
        _atomic_write(self.plan_path.with_name("plan.json.bridge"), text)
        seen = witness.read(self.witness_path) or Witness()
        self._witness = Witness(seen.states, witness.digest(text), seen.last)
        _atomic_write(self.witness_path, self._witness.to_json())

    def save(self, state: State) -> State:
        """Write atomically (temp file + rename) and keep the active-loop index in step.

        The index entry is written before a running state and removed after any other, so a
        crash between the two writes never leaves a running loop that the hooks cannot find.
        """
        state = state.evolve(updated_at=now_iso())
        if not isinstance(state.plan, UnloadedPlan) and not self.plan_path.exists():
            self.save_plan(state.plan)
        if state.status == "running":
            self._write_markers(marker_text(state))
            self._write_state(state.to_json())
        elif state.status == "done" or state.owner == "driver":
            # A clean `done` is the loop's own ending, and a driver's run ends when the
            # user's own command returns: the rails come off with them.
            self._write_state(state.to_json())
            self.release()
        else:
            # Paused, aborted, stopped by a guard or by tamper evidence: fail closed. The
            # rails stay until the user's stop, cancel or resume (which call `release` or
            # save a running state); a released loop is not guarded again by a late save.
            if self.guarded():
                self._write_markers(marker_text(state))
            self._write_state(state.to_json())
        return state

    def guarded(self) -> bool:
        """Whether either index still marks this worktree as guarded."""
        return self.marker.exists() or self.rails.exists()

    def release(self) -> None:
        """Take the rails off: only a clean `done` and the user's own controls call this."""
        for path in (self.marker, self.rails):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def repair_markers(self) -> None:
        """Restore a marker that was removed or changed outside the bridge, from the state
        (or the surviving copy), and log it: a guarded worktree stays guarded."""
        with self.locked():
            texts = [_read_text(path) for path in (self.marker, self.rails)]
            if texts[0] is not None and texts[0] == texts[1]:
                return
            try:
                state = self.load(with_plan=False)
            except BridgeError:
                state = None
            if state is not None and state.status != "running" and not self.guarded():
                return
            if state is None and not self.witness_path.exists():
                # No loop of the bridge's ever ran here: a planted marker is not made whole.
                return
            text = marker_text(state) if state is not None else _surviving(texts)
            if text is None:
                return
            self._write_markers(text)
            self.append_event(
                "rails.tampered",
                decision="rails kept",
                reason="an active-loop marker was removed or changed outside the bridge; restored",
            )

    def _write_markers(self, text: str) -> None:
        for path in (self.marker, self.rails):
            # Rewritten only when it changes (owner or status): an fsync per hook adds up.
            if _read_text(path) != text:
                # The temp file goes in the loop's own directory: a leftover in the index
                # would keep the launcher from answering idle hooks without Python.
                _atomic_write(path, text, tmp_dir=self.dir)

    def _logged(self, event: str) -> bool:
        tail = self.tail_events(1)
        return bool(tail) and tail[-1].get("event") == event

    def _write_state(self, text: str) -> None:
        """The witness first, then the state: a crash between leaves a state it still vouches for.

        The witness is read afresh (the caller holds the lock): another process may have
        written since this one loaded.
        """
        seen = witness.read(self.witness_path) or Witness()
        self._witness = seen.after(text, _read_text(self.state_path))
        _atomic_write(self.witness_path, self._witness.to_json())
        _atomic_write(self.state_path, text)

    def _tampered(self, what: str, changed: Path) -> NoReturn:
        """Stop the loop: keep the changed file aside, restore what the bridge last wrote."""
        seen = self._witness
        assert seen is not None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        kept = ""
        aside = changed.with_name(f"{changed.name}.changed-{stamp}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(changed, aside)
            kept = f"; the changed file is kept at {aside}"
        backup = self.plan_path.with_name("plan.json.bridge")
        if changed == self.plan_path and backup.exists():
            _atomic_write(self.plan_path, backup.read_text(encoding="utf-8"))
        why = f"{what} outside the bridge{kept}"
        try:
            last = parse_state(migrate(json.loads(seen.last)))
        except (ValueError, typedjson.Invalid):
            self._quarantine(why)
        self.save(last.evolve(status="stopped", stop_reason=why))
        self.append_event("state.tampered", decision="stopped", reason=why)
        raise StateCorrupt(
            f"{why}. The loop is stopped and was not trusted; its safety rails stay on until "
            "you run stop. Check the change, then resume or plan again"
        )

    def write_beside(self, name: str, text: str) -> None:
        """A file of the loop's own beside its state (the finding ledger), atomically."""
        _atomic_write(self.dir / name, text)

    def save_result(self, record: dict[str, Any]) -> None:
        _atomic_write(
            self.result_path, json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        )

    def load_result(self) -> dict[str, Any] | None:
        """last.json, or None when there is none or it cannot be read (it is only a report)."""
        text = _read_text(self.result_path)
        try:
            data = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _quarantine(self, why: str) -> NoReturn:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        aside = self.state_path.with_name(f"state.json.corrupt-{stamp}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(self.state_path, aside)
        # The markers stay: a damaged state must not switch the rails off.
        self.append_event(
            "state.corrupt", decision="rails kept", reason=f"{why}; moved to {aside.name}"
        )
        raise StateCorrupt(
            f"state.json was {why}; moved aside to {aside}. The loop drives nothing now, but "
            f"its safety rails stay on until you run {terminal_command('stop')} (or plan again)"
        )

    # -- ledger -------------------------------------------------------------------------

    def append_event(self, event: str, **fields: Any) -> None:
        """One JSON object per line, written with a single append so lines never interleave."""
        record = {"ts": now_iso(), "event": event, **fields}
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def tail_events(self, count: int = 20) -> list[dict[str, Any]]:
        """The last events, read from the end of the file so a long ledger costs nothing."""
        try:
            with self.events_path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 64 * 1024 * max(1, count // 50 + 1)))
                lines = handle.read().splitlines()[-count:]
        except FileNotFoundError:
            return []
        events = []
        for raw in lines:
            with contextlib.suppress(ValueError):
                events.append(json.loads(raw))
        return events


def marker_text(state: State) -> str:
    """The active marker: enough for the gate to decide without loading the engine."""
    fields = {
        "worktree": state.worktree,
        "session_id": state.session_id,
        "style": state.style,
        "owner": state.owner,
    }
    return json.dumps(fields) + "\n"


def _surviving(texts: list[str | None]) -> str | None:
    """The copy of a marker that still parses as one, when the state cannot say."""
    for text in texts:
        try:
            data = json.loads(text) if text is not None else None
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("worktree"), str):
            return text
    return None


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _atomic_write(path: Path, text: str, tmp_dir: Path | None = None) -> None:
    """Temp file (in `tmp_dir`, on the same file system), fsync, rename: readers see the old
    or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = tmp_dir or path.parent
    folder.mkdir(parents=True, exist_ok=True)
    # Not `tempfile`: its import pulls in shutil and the compression modules, on the hot path.
    tmp = folder / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _release(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def _acquire(fd: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.002
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise LockTimeout(f"another autopilot-codex hook held the lock for over {timeout:g}s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
