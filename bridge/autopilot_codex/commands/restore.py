"""`autopilot-codex restore`: list the shadow history's snapshots, or bring one back.

`--list` shows them; `restore ID` brings back the work tree and the refs that moved since,
after a snapshot of the present (so the restore itself can be undone); `restore ID -- PATH`
brings back one path. While the implementer is mid-turn it refuses without `--force`: its
next command would build on a tree it did not leave.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import BridgeError
from ..shadow import repo
from ..shadow.back import restore
from ..shadow.history import Snapshot, every
from ..shadow.hook import mid_turn
from ..shadow.snapshot import path_of
from ..store import Store


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("restore", help="bring back the work tree as a snapshot kept it")
    parser.add_argument("ident", nargs="?", metavar="ID", help="the snapshot (see --list)")
    parser.add_argument("path", nargs="?", metavar="PATH", help="after --: only this path")
    parser.add_argument("--list", action="store_true", help="show the snapshots, newest first")
    parser.add_argument("--force", action="store_true", help="even while a turn is running")


def run(args: argparse.Namespace, cwd: str, session: str | None) -> tuple[int, str]:
    from . import worktree_of

    shadow = repo.at(worktree_of(cwd))
    store = Store(shadow.worktree)
    if args.list or args.ident is None:
        if repo.exists(shadow):
            repo.settle(shadow, store.lock_timeout)
        return 0, table(every(shadow))
    if mid_turn(store.dir) and not args.force:
        raise BridgeError(
            "the implementer's session is mid-turn here: restore once it stops, or give --force"
        )
    path = path_of(shadow, str(Path(cwd) / args.path)) if args.path else None
    done = restore(shadow, args.ident, path)
    store.append_event(
        "restore",
        decision="restored",
        snapshot=args.ident,
        path=path,
        undo=done.undo.meta.n,
        refs=list(done.refs),
    )
    refs = f"; refs put back: {', '.join(done.refs)}" if done.refs else ""
    return 0, (
        f"Restored snapshot {args.ident}{f' ({path})' if path else ''}: {done.written} file(s) "
        f"written, {done.removed} removed{refs}.\n"
        f"The tree as it was is snapshot {done.undo.meta.n}: "
        f"`autopilot-codex restore {done.undo.meta.n}` undoes this."
    )


def table(snapshots: list[Snapshot]) -> str:
    if not snapshots:
        return "No snapshots here yet: a loop keeps them from its start."
    rows = [("ID", "TIME", "POINT", "FILES", "ITERATION", "LOST")]
    rows += [
        (
            str(meta.n),
            meta.when(),
            meta.point,
            str(meta.changed),
            "-" if meta.iteration is None else str(meta.iteration),
            str(len(meta.lost)) if meta.lost else "",
        )
        for meta in (snap.meta for snap in snapshots)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def confirm_prune(would: str) -> None:
    """`loops --prune` removes a loop's snapshots only once the user says so (or `--yes`)."""
    import sys

    lines = [line for line in would.splitlines() if line.startswith("would remove")]
    if not lines:
        return
    listed = "\n".join(lines)
    if not sys.stdin.isatty():
        raise BridgeError(
            f"these loops keep snapshots of your work (autopilot-codex restore):\n{listed}\n"
            "give --yes to remove them with their snapshots"
        )
    from .. import output

    output.out(f"These loops keep snapshots of your work:\n{listed}")
    if input("Remove them with their snapshots? [y/N] ").strip().lower() not in ("y", "yes"):
        raise BridgeError("nothing pruned")
