"""`status`: the loop's tasks, counters, last review and verdict, or the raw state.json (with
the loop's spend under `spend`)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import surrogates
from ..errors import BridgeError
from ..store import Store
from ..styles import of
from . import entry, no_loop, worktree_of


def status(*, cwd: str | Path, as_json: bool) -> str:
    store = Store(worktree_of(cwd))
    if as_json:
        return _raw(store)
    state = store.load()
    if state is None:
        return rails_only(store) or no_loop()
    from ..shadow.hook import lost_lines

    text = of(state).status_text(state, store, entry)
    return "\n".join([text, *lost_lines(store.tail_events(200))])


def rails_only(store: Store) -> str | None:
    """No loop to show, but the rails of one are kept on (its state damaged and moved aside,
    or gone): what is kept on, why, and how to end it. None when nothing is kept on."""
    if not store.guarded():
        return None
    # Named by the time they were moved aside: the last in order is the newest.
    aside = sorted(p.name for p in store.dir.glob("state.json.corrupt-*"))
    why = (
        f"its state.json was damaged and moved aside to {aside[-1]}"
        if aside
        else "its state.json is gone"
    )
    return (
        f"autopilot-codex: no loop drives this worktree, but the safety rails of the last one "
        f"stay on ({why}): pushes and the other guarded commands are still denied, as they were "
        f"while it ran. A damaged state never switches them off. End them with "
        f"{entry('stop')}, or start a new loop with {entry('plan')} <goal>."
    )


def _raw(store: Store) -> str:
    """The file as stored, indented for reading; a damaged file is shown, not repaired."""
    from ..fileio import regular_text

    try:
        text = regular_text(store.state_path)
    except FileNotFoundError:
        return '{"status": "idle"}'
    except OSError as exc:  # a fifo or a device there: said, never waited on
        raise BridgeError(f"cannot read {store.state_path}: {exc.strerror}") from exc
    try:
        data = surrogates.loads(text)
    except ValueError:
        return text.rstrip("\n")
    if isinstance(data, dict):
        # The one spend figure every view shows (`spend`), beside the file's own meters.
        from .. import loopfiles
        from ..spend import of_files

        data["spend"] = of_files(loopfiles.load(store.dir)).as_json()
    return json.dumps(data, indent=2, ensure_ascii=False)
