"""Where a loop's files live and how they are written: the lock around a read-modify-write,
atomic writes, the active-loop marker the gate reads, the event ledger, and quarantine of a
file that cannot be trusted.

Every load checks the keyed witness (`witness`): the state, the plan, the active marker and
the ledger's anchor (`ledger`) must be what the bridge last wrote; anything else stops the loop
as tampering, and a state no witness vouches for is moved aside, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from . import ledger, typedjson, witness, witness_key
from .errors import BridgeError, StateCorrupt, permission_denied
from .fileio import acquire as _acquire
from .fileio import atomic_write as _atomic_write
from .fileio import read_text as _read_text
from .fileio import release as _release
from .output import terminal_command
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
from .witness import Damaged, Witness


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
        # The files of nested repositories as the loop started (gitrepo/inside.py).
        self.nested_path = self.dir / "nested.json"
        # How the last loop ended (ralph): kept after the loop is off, replaced by the next.
        self.result_path = self.dir / "last.json"
        # Every finished loop's record, one a line: `last.json` is only the newest.
        self.history_path = self.dir / "history.jsonl"
        self.marker = active_marker(worktree, self.home)
        # The second index of guarded worktrees (paths.INDEXES): the same marker, kept in step.
        self.rails = rails_marker(worktree, self.home)
        self.lock_timeout = lock_timeout
        self._witness: Witness | None = None
        # Set when the bridge moved a changed ledger aside: the next witness anchors anew.
        self._ledger_reset = False
        # What the sealed ledger says the loop reached, when an older witness was put back.
        self._reached: dict[str, float] = {}
        # Whether this Store holds the lock (only then may the witness be re-sealed), and
        # whether events were appended under it (the witness's anchor moves past them).
        self._holding = False
        self._appended = False
        # Each status change this Store wrote, as (status before, state after): the caller
        # tells the user of it (`announce`), once, as only the writer under the lock sees it.
        self.moved: list[tuple[str, State]] = []

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
            self._holding = True
            try:
                yield
            finally:
                try:
                    if self._appended:
                        self._anchor()
                finally:
                    self._holding = self._appended = False
                    _release(fd)
        finally:
            os.close(fd)

    # -- state --------------------------------------------------------------------------

    def load(self, *, with_plan: bool = True) -> State | None:  # noqa: C901 - one check per way a file can be bad
        """The current state, None when there is none. Corrupt state is moved aside.

        Hooks that never read the plan pass `with_plan=False`: at 500 tasks, reading and
        checking it would be most of their cost.
        """
        self._witness = None
        try:
            text = self.state_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if self.witness_path.exists() and self.guarded() and not self._logged("state.removed"):
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
        # The key only once there is a state to check: a look at a worktree with no loop
        # writes nothing.
        key = witness_key.load(self.home)
        damage: str | None = None
        try:
            self._witness = witness.read(self.witness_path, key.secret)
        except Damaged as exc:
            damage = str(exc)
        inline = data.pop("plan", None) if isinstance(data, dict) else None
        try:
            state = parse_state(data)
        except typedjson.Invalid as exc:
            self._quarantine(str(exc))
        if self._witness is None:
            self._witness = self._adopt(key, text, damage)
        if not self._witness.vouches(text):
            self._tampered("state.json was changed", self.state_path)
        self._check_marker_and_ledger(key.secret)
        if not with_plan:
            return state.evolve(plan=UNLOADED_PLAN)
        return state.evolve(plan=self._load_plan(inline))

    def _adopt(self, key: witness_key.Key, text: str, damage: str | None) -> Witness:
        """The witness of a loop from before the keyed witness, taken over as it was when the
        key was made; any other state without a witness that verifies is not trusted."""
        entry = key.adoptable(self.dir.name, text)
        if entry is None:
            self._quarantine(
                f"not vouched for by the bridge ({damage or 'witness.json is missing'})",
                event="state.tampered",
            )
        # In memory until the next state write seals it (under the lock, as every write).
        end = ledger.end(self.events_path)
        return Witness(
            states=(witness.digest(text),),
            plan=entry.get("plan", ""),
            last=text,
            ledger=end,
            origin=end,
            adopted=now_iso(),
        )

    def _check_marker_and_ledger(self, key: bytes) -> None:
        seen = self._witness
        assert seen is not None
        if not seen.vouches_marker(_read_text(self.marker)):
            self._tampered("the active marker was changed", self.marker)
        _, problem = ledger.verify(self.events_path, key, seen.ledger, seen.serial)
        if problem == ledger.REPLAYED:
            # The ledger is the bridge's; the witness and state are an older pair put back.
            # What the loop had reached comes from the sealed lines, not from the old copy.
            self._reached = ledger.newest(self.events_path, seen.ledger)
            self._tampered(problem, self.witness_path)
        if problem:
            self._tampered(problem, self.events_path)

    def _base_witness(self) -> Witness:
        """The witness to build the next one on: the file (another process may have written
        since this one loaded), else what this process loaded or adopted, else a new one."""
        try:
            fresh = witness.read(self.witness_path, witness_key.load(self.home).secret)
        except Damaged:
            fresh = None
        known = fresh or self._witness
        if known is not None:
            return known
        end = ledger.end(self.events_path)
        return Witness(ledger=end, origin=end)

    def audit(self) -> None:
        """The whole ledger since its origin, when the user resumes a loop: a line rewritten
        before the last anchor is caught here. Not on hooks nor `status`, which must stay flat
        at 100,000 events (a few microseconds a line). Call after `load`."""
        seen = self._witness
        if seen is None:
            return
        problem = ledger.audit(self.events_path, self._key(), seen.origin, seen.ledger)
        if problem:
            self._tampered(problem, self.events_path)

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
        self._write_witness(self._base_witness().evolve(plan=witness.digest(text)), self._key())

    def save(self, state: State) -> State:
        """Write atomically (temp file + rename) and keep the active-loop index in step.

        The index entry is written before a running state and removed after any other, so a
        crash between the two writes never leaves a running loop that the hooks cannot find.
        """
        state = state.evolve(updated_at=now_iso())
        if not isinstance(state.plan, UnloadedPlan) and not self.plan_path.exists():
            self.save_plan(state.plan)
        text = state.to_json()
        before = _status_in(_read_text(self.state_path))
        on_disk = _read_text(self.marker)
        if before is not None and before != state.status:
            self.moved.append((before, state))
        if state.status == "running":
            marker = marker_text(state)
            self._vouch(text, marker, on_disk)
            self._write_markers(marker)
            _atomic_write(self.state_path, text)
        elif state.status == "done" or state.owner == "driver":
            # A clean `done` is the loop's own ending, and a driver's run ends when the
            # user's own command returns: the rails come off with them.
            self._vouch(text, None, on_disk)
            _atomic_write(self.state_path, text)
            self.release()
        elif self.guarded():
            # Paused, aborted, stopped by a guard or by tamper evidence: fail closed. The
            # rails stay until the user's stop, cancel or resume (which call `release` or
            # save a running state); a released loop is not guarded again by a late save.
            marker = marker_text(state)
            self._vouch(text, marker, on_disk)
            self._write_markers(marker)
            _atomic_write(self.state_path, text)
        else:
            self._vouch(text, None, on_disk)
            _atomic_write(self.state_path, text)
        return state

    def guarded(self) -> bool:
        """Whether either index still marks this worktree as guarded."""
        return self.marker.exists() or self.rails.exists()

    def release(self) -> None:
        """Take the rails off: only a clean `done` and the user's own controls call this.

        The witness first vouches for the marker's absence (the caller holds the lock), so a
        released loop's next load does not read the removal as tampering.
        """
        text = _read_text(self.state_path)
        if text is not None and self.witness_path.exists():
            with contextlib.suppress(BridgeError, witness.Damaged):
                self._vouch(text, None, _read_text(self.marker))
        for path in (self.marker, self.rails):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def repair_markers(self) -> str:
        """Restore a marker that was removed or changed outside the bridge, from the state
        (or the surviving copy), and log it: a guarded worktree stays guarded. Returns what
        tamper evidence said, if loading the state found the change (the active marker is
        under the witness: a change to it stops the loop)."""
        with self.locked():
            texts = [_read_text(path) for path in (self.marker, self.rails)]
            if texts[0] is not None and texts[0] == texts[1]:
                return ""
            try:
                state = self.load(with_plan=False)
            except BridgeError as exc:
                # Tamper evidence may have stopped the loop and written both markers already.
                texts = [_read_text(path) for path in (self.marker, self.rails)]
                if texts[0] is not None and texts[0] == texts[1]:
                    return str(exc)
                state = None
            if state is not None and state.status != "running" and not self.guarded():
                return ""
            if state is None and not self.witness_path.exists():
                # No loop of the bridge's ever ran here: a planted marker is not made whole.
                return ""
            text = marker_text(state) if state is not None else _surviving(texts)
            if text is None:
                return ""
            self._write_markers(text)
            self.append_event(
                "rails.tampered",
                decision="rails kept",
                reason="an active-loop marker was removed or changed outside the bridge; restored",
            )
        return ""

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

    def _vouch(self, text: str, marker: str | None, marker_on_disk: str | None) -> None:
        """The witness first, then the marker and the state: a crash between leaves files it
        still vouches for.

        The witness is read afresh (the caller holds the lock): another process may have
        written since this one loaded. The ledger's anchor moves to where the ledger verifiably
        ends: a line that does not verify stays after it, to be reported at the next load.
        """
        key = self._key()
        seen = self._base_witness()
        if self._ledger_reset:
            anchor, self._ledger_reset = ledger.Anchor(), False
            seen = seen.evolve(origin=anchor)
        else:
            anchor, _ = ledger.verify(self.events_path, key, seen.ledger, seen.serial)
        seen = seen.after(
            text, _read_text(self.state_path), marker=marker, marker_on_disk=marker_on_disk
        )
        self._write_witness(seen.evolve(ledger=anchor), key)

    def _write_witness(self, seen: Witness, key: bytes) -> None:
        floor = int(self._reached.get("witness", 0))
        sealed = seen.evolve(serial=max(seen.serial, floor) + 1)
        _atomic_write(self.witness_path, sealed.to_json(key))
        # Only once on disk: a line may never name a serial no witness on disk has.
        self._witness = sealed

    def _key(self) -> bytes:
        return witness_key.load(self.home).secret

    def _tampered(self, what: str, changed: Path) -> NoReturn:
        """Stop the loop: keep the changed file aside, restore what the bridge last wrote."""
        seen = self._witness
        assert seen is not None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        kept = ""
        # Kept in the loop's folder: a copy of a marker left in the index would be read as one.
        name = "marker" if changed == self.marker else changed.name
        aside = self.dir / f"{name}.changed-{stamp}-{os.getpid()}"
        with contextlib.suppress(OSError):
            os.replace(changed, aside)
            kept = f"; the changed file is kept at {aside}"
        # A ledger moved aside starts again, with this event as its first line.
        self._ledger_reset = changed == self.events_path and not changed.exists()
        copy = _read_text(self.plan_path.with_name("plan.json.bridge"))
        # Restored only when the witness vouches for the copy: it can be edited too.
        if changed == self.plan_path and copy is not None and witness.digest(copy) == seen.plan:
            _atomic_write(self.plan_path, copy)
        why = f"{what} outside the bridge{kept}"
        try:
            last = parse_state(migrate(json.loads(seen.last)))
        except (ValueError, typedjson.Invalid):
            self._quarantine(why)
        reached = self._reached
        last = last.evolve(
            budget_used_usd=max(last.budget_used_usd, reached.get("budget_used_usd", 0.0)),
            iteration=max(last.iteration, int(reached.get("iteration", 0))),
        )
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
        """`last.json`, and a line in `history.jsonl`: a later loop in this worktree replaces
        the one, never the other."""
        line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        _atomic_write(self.result_path, line)
        with self.history_path.open("a", encoding="utf-8") as handle:
            handle.write(line)

    def load_result(self) -> dict[str, Any] | None:
        """last.json, or None when there is none or it cannot be read (it is only a report)."""
        text = _read_text(self.result_path)
        try:
            data = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _quarantine(self, why: str, event: str = "state.corrupt") -> NoReturn:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        aside = self.state_path.with_name(f"state.json.corrupt-{stamp}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(self.state_path, aside)
        # The markers stay: a damaged state must not switch the rails off.
        self.append_event(
            event, decision="rails kept", reason=f"{why}; moved to {aside.name}"
        )
        raise StateCorrupt(
            f"state.json was {why}; moved aside to {aside}. The loop drives nothing now, but "
            f"its safety rails stay on until you run {terminal_command('stop')} (or plan again)"
        )

    # -- ledger -------------------------------------------------------------------------

    def append_event(self, event: str, **fields: Any) -> None:
        """One JSON object per line, sealed and chained to the line before (`ledger`)."""
        record = {"ts": now_iso(), "event": event, **fields}
        record.pop("mac", None)  # the seal's own field
        record["witness"] = self._witness.serial if self._witness is not None else 0
        ledger.append(self.events_path, self._key(), record)
        self._appended = self._appended or self._holding

    def _anchor(self) -> None:
        """Move the witness's ledger anchor past the lines appended under the lock, once as the
        lock is let go, so cutting them off is noticed too. Only under the lock (the witness
        has one writer at a time), and only for a loop whose witness verifies. Lines appended
        without the lock are sealed all the same; until the next state write, only cutting
        them off the end goes unnoticed."""
        key = self._key()
        try:
            seen = witness.read(self.witness_path, key)
        except Damaged:
            return
        if seen is None:
            return
        anchor, _ = ledger.verify(self.events_path, key, seen.ledger, seen.serial)
        if anchor != seen.ledger:
            self._write_witness(seen.evolve(ledger=anchor), key)

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


def _status_in(text: str | None) -> str | None:
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    status = data.get("status") if isinstance(data, dict) else None
    return status if isinstance(status, str) else None


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
