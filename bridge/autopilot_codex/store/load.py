"""A loop's state and plan, saved and loaded: the witness first, then the markers, then the
state. Every load checks the keyed witness (`witness`): the state, the plan, the active marker
and the ledger's anchor (`ledger`) must be what the bridge last wrote; anything else stops the
loop as tampering, and a state no witness vouches for is moved aside, never trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeVar

from .. import ledger, surrogates, typedjson, witness, witness_key
from ..errors import BridgeError, StateCorrupt, permission_denied
from ..fileio import atomic_write, read_text, regular_text
from ..state import (
    SCHEMA_VERSION,
    UNLOADED_PLAN,
    Plan,
    State,
    UnloadedPlan,
    migrate,
    now_iso,
)
from ..state_ranges import parse_state
from ..witness import Damaged, Witness
from .files import parsed
from .markers import Markers, marker_text, surviving

T = TypeVar("T")


class _Torn(Exception):
    """A change seen without the lock: judged again under it."""


# As typed in a terminal, which every host can fall back to (the store names no host).
STOP = "autopilot-codex stop"


@dataclass
class Held:
    """One lock hold (`Store.hold`): the loop as loaded once as the lock was taken, and what
    the body leaves to be written as it is let go, in this order: the files beside the state
    (`beside`: name and text), the result (`last.json`), the event lines, then the save,
    whose witness write seals them."""

    state: State | None
    beside: list[tuple[str, str]] = field(default_factory=list)
    lines: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    save: State | None = None
    # The state as saved, once the hold is let go.
    saved: State | None = None


class Store(Markers):
    """The files of one worktree's loop, under `<home>/projects/<key>/`: where they live
    (`files`), the ledger (`events`), the witness and the lock (`seal`), the markers
    (`markers`); loaded, saved and repaired here."""

    @contextlib.contextmanager
    def hold(self, *, with_plan: bool = False) -> Iterator[Held]:
        """Load → (the body decides) → commit, under one lock: the loop loaded once, then
        what the body left in the `Held` written as the lock is let go. A body that raises
        writes nothing, so no line names a state that was never saved."""
        with self.locked():
            held = Held(self.load(with_plan=with_plan))
            yield held
            for name, text in held.beside:
                self.write_beside(name, text)
            if held.result is not None:
                self.save_result(held.result)
            for name, fields in held.lines:
                self.append_event(name, **fields)
            if held.save is not None:
                held.saved = self.save(held.save)

    def save_plan(self, plan: Plan) -> None:
        """Written once, when a loop is planned, before the state that refers to it."""
        text = json.dumps(typedjson.dump(plan), ensure_ascii=False, indent=1) + "\n"
        atomic_write(self.plan_path, text)
        # A copy to restore from if plan.json is ever changed by anything but the bridge.
        atomic_write(self.plan_path.with_name("plan.json.bridge"), text)
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
        # Read once: the status it had (`moved`) and what the witness still vouches for.
        on_disk = read_text(self.state_path)
        before = self._status_of(on_disk)
        marker_on_disk = read_text(self.marker)
        if isinstance(before, str) and before != state.status:
            self.moved.append((before, state))
        # A clean `done` is the loop's own ending, and a driver's run ends when the user's own
        # command returns: the rails come off with them. Any other state that is not running
        # (paused, aborted, stopped by a guard or by tamper evidence) fails closed: the rails
        # stay until the user's stop, cancel or resume (which call `release` or save a running
        # state); a released loop is not guarded again by a late save.
        ending = state.status == "done" or state.owner == "driver"
        marker = None
        if state.status == "running" or (not ending and self.guarded()):
            marker = marker_text(state)
        self._vouch(text, on_disk, marker, marker_on_disk)
        if marker is not None:
            self._write_markers(marker)
        atomic_write(self.state_path, text)
        self._read = (text, state.status)
        if ending and state.status != "running":
            self.release()
        return state

    def _status_of(self, text: str | None) -> object:
        """The status the state file's `text` holds: the last one this Store read or wrote
        when it is that very text (a hold's save follows its load), else parsed from it."""
        if text is not None and text == self._read[0]:
            return self._read[1]
        return (parsed(text) or {}).get("status")

    def load(self, *, with_plan: bool = True) -> State | None:
        """The current state, None when there is none. Corrupt state is moved aside.

        Hooks that never read the plan pass `with_plan=False`: at 500 tasks, reading and
        checking it would be most of their cost.

        Read without the lock, a change found may be a locked write seen half-way (a stop that
        saved the state, then took the marker off): the state is read again under the lock,
        where a change is a change, before anything is judged tampered.
        """
        return self._judged(lambda: self._load(with_plan))

    def _load(self, with_plan: bool) -> State | None:  # noqa: C901 - one check per way a file can be bad
        self._witness = None
        try:
            text = regular_text(self.state_path)
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
            data = surrogates.loads(text)
        except json.JSONDecodeError as exc:
            # Some messages end in "at" ("Unterminated string starting at"): say where once.
            problem = exc.msg.removesuffix(" at")
            self._quarantine(f"not valid JSON ({problem} at line {exc.lineno})")
        except ValueError as exc:  # nested too deep, a number too large
            self._quarantine(f"not valid JSON ({exc})")
        # The status as written, before any migration: what `save` compares (`_status_of`).
        self._read = (text, data.get("status") if isinstance(data, dict) else None)
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

    def readable(self, *, with_plan: bool = True) -> State | None:
        """`load`, a corrupt state (moved aside by now) read as none."""
        try:
            return self.load(with_plan=with_plan)
        except StateCorrupt:
            return None

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
        if not seen.vouches_marker(read_text(self.marker)):
            self._tampered("the active marker was changed", self.marker)
        _, problem = ledger.verify(self.events_path, key, seen.ledger, seen.serial)
        if problem == ledger.REPLAYED:
            # The ledger is the bridge's; the witness and state are an older pair put back.
            # What the loop had reached comes from the sealed lines, not from the old copy.
            self._reached = ledger.newest(self.events_path, seen.ledger)
            self._tampered(problem, self.witness_path)
        if problem:
            self._tampered(problem, self.events_path)

    def audit(self) -> None:
        """The whole ledger since its origin, when the user resumes a loop: a line rewritten
        before the last anchor is caught here. Not on hooks nor `status`, which must stay flat
        at 100,000 events (a few microseconds a line). Call after `load`."""
        seen = self._witness
        if seen is None:
            return
        problem = ledger.audit(self.events_path, self._key(), seen.origin, seen.ledger)
        if problem:
            self._judged(lambda: self._tampered(problem, self.events_path))

    def with_plan(self, state: State) -> State:
        if not isinstance(state.plan, UnloadedPlan):
            return state
        return state.evolve(plan=self._judged(lambda: self._load_plan(None)))

    def _judged(self, check: Callable[[], T]) -> T:
        """`check`, under the lock if it finds a change while the lock is not held."""
        try:
            return check()
        except _Torn:
            with self.locked():
                return check()

    def _load_plan(self, inline: object) -> Plan:
        if inline is None:
            try:
                text = regular_text(self.plan_path)
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

    def _tampered(self, what: str, changed: Path) -> NoReturn:
        """Stop the loop: keep the changed file aside, restore what the bridge last wrote."""
        if not self._holding:
            raise _Torn
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
        copy = read_text(self.plan_path.with_name("plan.json.bridge"))
        # Restored only when the witness vouches for the copy: it can be edited too.
        if changed == self.plan_path and copy is not None and witness.digest(copy) == seen.plan:
            atomic_write(self.plan_path, copy)
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

    def _quarantine(self, why: str, event: str = "state.corrupt") -> NoReturn:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        aside = self.state_path.with_name(f"state.json.corrupt-{stamp}-{os.getpid()}")
        with contextlib.suppress(OSError):
            os.replace(self.state_path, aside)
        # The markers stay: a damaged state must not switch the rails off.
        self.append_event(event, decision="rails kept", reason=f"{why}; moved to {aside.name}")
        raise StateCorrupt(
            f"state.json was {why}; moved aside to {aside}. The loop drives nothing now, but "
            f"its safety rails stay on until you run {STOP} (or plan again)"
        )

    def repair_markers(self) -> str:
        """Restore a marker that was removed or changed outside the bridge, from the state
        (or the surviving copy), and log it: a guarded worktree stays guarded. Returns what
        tamper evidence said, if loading the state found the change (the active marker is
        under the witness: a change to it stops the loop)."""
        with self.locked():
            texts = self._markers()
            if texts[0] is not None and texts[0] == texts[1]:
                return ""
            try:
                state = self.load(with_plan=False)
            except BridgeError as exc:
                # Tamper evidence may have stopped the loop and written both markers already.
                texts = self._markers()
                if texts[0] is not None and texts[0] == texts[1]:
                    return str(exc)
                state = None
            if state is not None and state.status != "running" and not self.guarded():
                return ""
            if state is None and not self.witness_path.exists():
                # No loop of the bridge's ever ran here: a planted marker is not made whole.
                return ""
            text = marker_text(state) if state is not None else surviving(texts)
            if text is None:
                return ""
            self._write_markers(text)
            self.append_event(
                "rails.tampered",
                decision="rails kept",
                reason="an active-loop marker was removed or changed outside the bridge; restored",
            )
        return ""


class Opens(Protocol):
    """A hook whose store is built at its first use (`styles.context.HookContext`)."""

    @property
    def store(self) -> Store: ...


@contextlib.contextmanager
def holding(hook: Opens, *, with_plan: bool = False) -> Iterator[Held]:
    """`Store.hold` of the hook's store, which this first use builds when the entrance built
    none: a hook that holds its loop once comes to the store once."""
    with hook.store.hold(with_plan=with_plan) as held:
        yield held
