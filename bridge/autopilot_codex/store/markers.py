"""The active-loop marker the gate reads, in both indexes (paths.INDEXES), kept in step with
the state; taken off only by a clean ending or the user's own controls."""

from __future__ import annotations

import contextlib
import json

from .. import witness
from ..errors import BridgeError
from ..fileio import atomic_write, read_text
from ..state import State
from .files import parsed
from .seal import Sealed


class Markers(Sealed):
    def guarded(self) -> bool:
        """Whether either index still marks this worktree as guarded."""
        return self.marker.exists() or self.rails.exists()

    def release(self) -> None:
        """Take the rails off: only a clean `done` and the user's own controls call this.

        The witness first vouches for the marker's absence (the caller holds the lock), so a
        released loop's next load does not read the removal as tampering.
        """
        text = read_text(self.state_path)
        if text is not None and self.witness_path.exists():
            with contextlib.suppress(BridgeError, witness.Damaged):
                self._vouch(text, text, None, read_text(self.marker))
        for path in (self.marker, self.rails):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _write_markers(self, text: str) -> None:
        for path in (self.marker, self.rails):
            # Rewritten only when it changes (owner or status): an fsync per hook adds up.
            if read_text(path) != text:
                # The temp file goes in the loop's own directory: a leftover in the index
                # would keep the launcher from answering idle hooks without Python.
                atomic_write(path, text, tmp_dir=self.dir)

    def _markers(self) -> list[str | None]:
        return [read_text(path) for path in (self.marker, self.rails)]


def marker_text(state: State) -> str:
    """The active marker: enough for the gate to decide without loading the engine."""
    fields = {
        "worktree": state.worktree,
        "session_id": state.session_id,
        "style": state.style,
        "owner": state.owner,
    }
    return json.dumps(fields) + "\n"


def surviving(texts: list[str | None]) -> str | None:
    """The copy of a marker that still parses as one, when the state cannot say."""
    for text in texts:
        data = parsed(text)
        if data is not None and isinstance(data.get("worktree"), str):
            return text
    return None
