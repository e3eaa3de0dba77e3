"""The matchers over the files a command names: as a word, as a redirection, or as the path of a
file tool (which `judge` reads as `cat PATH` or `> PATH`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from .rules import Where, inside
from .secrets import is_secret_path
from .shell import Command

# Words these commands print, not files they open: `echo .env >> .gitignore` is fine.
PRINTERS = frozenset({"echo", "printf"})
# Commands that only read the files they name.
READERS = frozenset(
    {"cat", "less", "more", "head", "tail", "grep", "rg", "jq", "wc", "diff", "ls", "stat", "file"}
)
# `find` only reads what it walks unless one of these actions writes, deletes or runs.
_FIND_WRITES = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_ENVIRON = re.compile(r"/proc/[^/]+/environ")


def secret_file(command: Command, where: Where) -> str | None:
    for path, _reading in _paths(command):
        if is_secret_path(path):
            return f"{path} holds credentials; the loop does not read or write them"
    return None


def process_environment(command: Command, where: Where) -> str | None:
    found = (path for path, _reading in _paths(command) if _ENVIRON.fullmatch(path))
    return next((f"{p} holds a process's environment, credentials included" for p in found), None)


def host_settings(command: Command, where: Where) -> str | None:
    for path, reading in _paths(command):
        if reading or _reads_only(command):
            continue
        if where.hosts.is_settings_file(path):
            return (
                f"{path} decides which hooks the host runs; changing it could switch the "
                "supervisor off"
            )
        if _run_file(path, command.cwd, where) and not _spared(command, path):
            return (
                f"{path} is a file a host or git reads to decide what programs to run; it is "
                "the user's to change, not the loop's (reading it is fine)"
            )
    return None


# Git verbs that name a path without writing it: `git add .mcp.json`, `git log -- .claude`.
_GIT_READS = frozenset({"add", "blame", "diff", "grep", "log", "ls-files", "show", "status"})


def _reads_only(command: Command) -> bool:
    if command.name != "git" or len(command.argv) < 2 or command.argv[1] not in _GIT_READS:
        return False
    return not any(arg.startswith("--output") for arg in command.argv)


def _spared(command: Command, path: str) -> bool:
    """Words that name a run file without writing one: `mkdir sub/.git` makes a folder (the
    link file of that name is what git would follow; what lands inside is compared at the
    next start), and `cp .mcp.json backup.json` reads its sources (only the last word is
    written, unless a `-t` names the target first)."""
    if command.name == "mkdir":
        return path.rstrip("/").rsplit("/", 1)[-1] == ".git"
    if command.name != "cp" or any(a.startswith(("-t", "--target")) for a in command.argv):
        return False
    words = [a for a in command.argv[1:] if not a.startswith("-")]
    return len(words) > 1 and path in words[:-1] and path != words[-1]


def _run_file(raw: str, cwd: str, where: Where) -> bool:
    """Does `raw` name, inside the worktree, a file some host or git runs programs from
    (`Host.run_files`, `GIT_RUN_FILES`)? Both as written and as resolved: a link to
    `.mcp.json` names it too."""
    from ..runfiles import matches

    written = Path(os.path.normpath(Path(cwd) / os.path.expanduser(raw)))
    return any(
        inside(path, where.worktree)
        and matches(path.relative_to(where.worktree).as_posix(), where.hosts.run_files())
        for path in (written, where.resolve(raw, cwd))
    )


def spend_record(command: Command, where: Where) -> str | None:
    for path, reading in _paths(command):
        if reading:
            continue
        resolved = str(where.resolve(path, command.cwd))
        spent = where.hosts.is_spend_record
        globbed = (os.path.realpath(m) for m in _globbed(path, command.cwd))
        if spent(path) or spent(resolved) or any(map(spent, globbed)):
            return (
                f"{path} holds the host's own record of what the implementer spends; the "
                "loop's budget is read from it, so it may be read, never changed"
            )
    return None


def _globbed(raw: str, cwd: str) -> Iterator[str]:
    """A pattern the shell expands (`~/.cl*/projects/*/*.jsonl`) names what it matches now."""
    if not any(c in raw for c in "*?["):
        return iter(())
    import glob
    import itertools

    # os.path and glob, not Path.glob: the pattern is often absolute, and Path.glob takes none.
    pattern = os.path.join(cwd, os.path.expanduser(raw))  # noqa: PTH118
    return itertools.islice(glob.iglob(pattern), 1000)  # noqa: PTH207


def loop_config(command: Command, where: Where) -> str | None:
    if any(where.resolve(path, command.cwd) == where.config_file for path, _ in _paths(command)):
        return "the loop's config.json holds the user's settings, not yours"
    return None


def loop_state(command: Command, where: Where) -> str | None:
    for path, _reading in _paths(command):
        resolved = where.resolve(path, command.cwd)
        # The config in the loop's home is the user's: `supervisor` names it.
        globbed = (where.resolve(m, command.cwd) for m in _globbed(path, command.cwd))
        reaches = inside(resolved, where.home) or any(inside(m, where.home) for m in globbed)
        if resolved != where.config_file and reaches:
            return "the loop's own state is written only by autopilot-codex itself"
    return None


def _paths(command: Command) -> Iterator[tuple[str, bool]]:
    """Each word that may name a file, and whether the command only reads it."""
    reading = command.name in READERS or (
        command.name == "find" and not _FIND_WRITES.intersection(command.argv)
    )
    words = () if command.name in PRINTERS else command.argv
    for raw, read in (*((w, reading) for w in words), *((r, False) for r in command.redirects)):
        text = raw.strip("'\"")
        if text:
            yield text, read
            # `--file=.env`, `KEY=path`: the value is the path.
            if "=" in text[1:]:
                yield text.split("=", 1)[1], read
