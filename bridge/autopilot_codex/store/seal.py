"""The keyed witness of what the bridge last wrote (`witness`): built on the newest one, moved
past the ledger's verified end, written before the files it vouches for; and the lock that
gives it one writer at a time."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from .. import ledger, witness
from ..fileio import acquire, atomic_write, release
from ..witness import Damaged, Witness
from .events import Events


class Sealed(Events):
    def _base_witness(self) -> Witness:
        """The witness to build the next one on: the file (another process may have written
        since this one loaded), else what this process loaded or adopted, else a new one."""
        try:
            fresh = witness.read(self.witness_path, self._key())
        except Damaged:
            fresh = None
        known = fresh or self._witness
        if known is not None:
            return known
        end = ledger.end(self.events_path)
        return Witness(ledger=end, origin=end)

    def _vouch(
        self, text: str, on_disk: str | None, marker: str | None, marker_on_disk: str | None
    ) -> None:
        """The witness first, then the marker and the state: a crash between leaves files it
        still vouches for. `on_disk`: the state file as the caller read it under the lock.

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
        seen = seen.after(text, on_disk, marker=marker, marker_on_disk=marker_on_disk)
        self._write_witness(seen.evolve(ledger=anchor), key)
        # Anchored past every line appended so far: the lock's release has none to add.
        self._appended = False

    def _write_witness(self, seen: Witness, key: bytes) -> None:
        floor = int(self._reached.get("witness", 0))
        sealed = seen.evolve(serial=max(seen.serial, floor) + 1)
        atomic_write(self.witness_path, sealed.to_json(key))
        # Only once on disk: a line may never name a serial no witness on disk has.
        self._witness = sealed

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

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive access for a read-modify-write, waiting at most `lock_timeout` seconds."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            acquire(fd, self.lock_timeout)
            self._holding = True
            try:
                yield
            finally:
                try:
                    if self._appended:
                        self._anchor()
                finally:
                    self._holding = self._appended = False
                    release(fd)
        finally:
            os.close(fd)
