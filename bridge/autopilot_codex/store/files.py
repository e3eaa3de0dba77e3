"""Where a loop's files live: one worktree's folder under `<home>/projects/<key>/`, its two
index markers, and the loop's own files kept beside the state (results, the finding ledger)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import surrogates
from ..fileio import atomic_write, read_text
from ..paths import active_marker, project_dir, rails_marker, state_home
from ..state import State
from ..witness import Witness


class Files:
    """The files of one worktree's loop, and what this process knows of them."""

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
        # The state file's text this Store last read or wrote, and the status in it.
        self._read: tuple[str | None, object] = (None, None)

    def excluded(self) -> tuple[str, ...]:
        """The loop's own files, kept out of every diff when the state home sits in the repo."""
        try:
            relative = self.home.resolve().relative_to(self.worktree.resolve())
        except ValueError:
            return ()
        return (str(relative),)

    def write_beside(self, name: str, text: str) -> None:
        """A file of the loop's own beside its state (the finding ledger), atomically."""
        atomic_write(self.dir / name, text)

    def save_result(self, record: dict[str, Any]) -> None:
        """`last.json`, and a line in `history.jsonl`: a later loop in this worktree replaces
        the one, never the other."""
        line = json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"
        atomic_write(self.result_path, line)
        with self.history_path.open("a", encoding="utf-8") as handle:
            handle.write(line)

    def load_result(self) -> dict[str, Any] | None:
        """last.json, or None when there is none or it cannot be read (it is only a report)."""
        return parsed(read_text(self.result_path))


def parsed(text: str | None) -> dict[str, Any] | None:
    """The JSON object `text` holds; None for no text, bad JSON or another value."""
    try:
        data = surrogates.loads(text) if text is not None else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
