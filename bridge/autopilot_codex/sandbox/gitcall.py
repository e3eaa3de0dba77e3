"""The wall around one git call of the bridge or the rounds driver.

A git call reads the work tree and its git directory and nothing else of the user's: no
network, no `/tmp` but a private one, the hidden places hidden. It writes only where its
subcommand must: the driver's snapshot and commit write the git directory (objects, refs,
logs, the index and its lock beside it), `stash` (when `plan` puts away uncommitted work) the
work tree too. Even then the files git runs programs from stay read-only: the config, hooks,
`info/`, the submodules' and linked worktrees' own git directories. A private index file lives
in a folder of its own, which is made writable. Any other subcommand only reads (a status takes
no lock: the runner sets `GIT_OPTIONAL_LOCKS=0`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from .places import hidden, shown
from .rules import Rules

Writes = Literal["nothing", "git", "tree"]
# What each writing subcommand the supervisor runs may write; every other one only reads.
WRITES: dict[str, Writes] = {
    **dict.fromkeys(
        ("add", "commit", "commit-tree", "hash-object", "index-pack", "pack-objects"), "git"
    ),
    **dict.fromkeys(("symbolic-ref", "mktree", "read-tree", "update-ref", "reset", "rm"), "git"),
    **dict.fromkeys(("update-index", "write-tree"), "git"),
    "stash": "tree",
    # `restore` (shadow/back.py) writes the files of a snapshot back into the work tree.
    "checkout-index": "tree",
    # lanes/queue.py: objects, and a merge driver's files in the empty folder it runs over.
    "merge-tree": "tree",
    # lanes/worktrees.py `finish`: a fast-forward of the user's checked-out branch.
    "merge": "tree",
}
# Inside a git directory: what git reads to decide what to run, never written by the bridge.
SEALED = ("config", "config.worktree", "hooks", "info", "modules", "worktrees", "commondir")
# Options that take a value before the subcommand (`git -c k=v status`).
_WITH_VALUE = ("-c", "-C", "--config-env")


def subcommand(args: Sequence[str]) -> str:
    """The git subcommand in `args` (the options before it skipped), or ""."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _WITH_VALUE:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg
    return ""


def rules(
    program: str,
    work_tree: str,
    git_dirs: Sequence[str],
    args: Sequence[str],
    index_file: str | None = None,
) -> Rules:
    """`program`: the git binary, shown even where a private `/tmp` would cover it (a git the
    user named in `AUTOPILOT_CODEX_GIT`)."""
    writes = WRITES.get(subcommand(args), "nothing")
    own = [str(Path(index_file).absolute().parent)] if index_file else []
    dirs = list(dict.fromkeys(git_dirs))
    sealed = [str(Path(d) / name) for d in dirs for name in SEALED]
    if writes == "nothing":
        return Rules(
            writable=tuple(own),
            shown=(work_tree, *dirs, program, *shown()),
            hidden=hidden(work_tree),
            fresh=("/tmp",),
        )
    tree = [work_tree] if writes == "tree" else []
    return Rules(
        writable=(*tree, *dirs, *own),
        shown=(*(() if tree else (work_tree,)), program, *shown()),
        sealed=tuple(sealed),
        hidden=hidden(work_tree),
        fresh=("/tmp",),
    )
