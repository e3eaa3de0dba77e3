"""The loop's event ledger: one sealed JSON object a line (`ledger`), read from its end."""

from __future__ import annotations

import contextlib
import os
from typing import Any

from .. import ledger, regular, surrogates, witness_key
from ..state import now_iso
from .files import Files


class Events(Files):
    def _key(self) -> bytes:
        return witness_key.load(self.home).secret

    def append_event(self, event: str, **fields: Any) -> None:
        """One JSON object per line, sealed and chained to the line before (`ledger`)."""
        record = {"ts": now_iso(), "event": event, **fields}
        record.pop("mac", None)  # the seal's own field
        record["witness"] = self._witness.serial if self._witness is not None else 0
        ledger.append(self.events_path, self._key(), record)
        self._appended = self._appended or self._holding

    def tail_events(self, count: int = 20) -> list[dict[str, Any]]:
        """The last events, read from the end of the file so a long ledger costs nothing."""
        try:
            with os.fdopen(regular.opened(self.events_path), "rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 64 * 1024 * max(1, count // 50 + 1)))
                lines = handle.read().splitlines()[-count:]
        except OSError:
            return []
        events = []
        for raw in lines:
            with contextlib.suppress(ValueError):
                events.append(surrogates.loads(raw))
        return events

    def _logged(self, event: str) -> bool:
        tail = self.tail_events(1)
        return bool(tail) and tail[-1].get("event") == event
