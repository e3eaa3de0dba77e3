"""Where a host keeps its own record of what the implementer spends, for the rail that keeps
the implementer from emptying or rewriting it (`rails.files.spend_record`).

A path names a record when it lies in the host's records folder, wherever the user's settings
put that folder (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`), or, written from a home or a variable the
shell does not expand (`~other/.claude/projects/...`, `$DIR/.codex/sessions`), when its text
names that folder; the folder that holds the records
folder (the host's config folder) counts too, since moving or removing it takes the records
with it. Standard library only: the hook path imports it.
"""

from __future__ import annotations

import os
import re


class SpendPlace:
    """`named`: the records folder by name (`.claude/projects`); `variable` and `default`: the
    variable that moves the host's config folder and its place below HOME; `folder`: the
    records folder's name in it; `spared`: what the host keeps beside the records there and
    the implementer may write (Claude Code's per-project memory), by path below the folder.

    A plain class: a dataclass costs the hook about half a millisecond to create at import.
    """

    __slots__ = ("default", "folder", "named", "spared", "variable")

    def __init__(
        self,
        named: re.Pattern[str],
        variable: str,
        default: str,
        folder: str,
        spared: re.Pattern[str] | None = None,
    ) -> None:
        self.named, self.variable, self.default = named, variable, default
        self.folder, self.spared = folder, spared

    def holds(self, path: str) -> bool:
        """Does this path (as written, or resolved) name a record, the folder of records, or
        the config folder that holds it?"""
        text = path.replace("\\", "/")
        if not text:
            return False
        text = os.path.normpath(os.path.expanduser(text))
        if text.startswith(("$", "~")):
            # A home or a variable the shell did not expand: judged by the folder's name.
            found = self.named.search(text)
            return found is not None and not self._spared(text[found.end() :])
        if not text.startswith("/"):
            # A relative path is judged resolved (the caller passes both), by place: the
            # worktree's own `.claude/projects` is not the host's.
            return False
        for root in self._configs():
            if text == root:
                return True
            records = f"{root.rstrip('/')}/{self.folder}"
            if text == records or text.startswith(records + "/"):
                return not self._spared(text[len(records) :])
        return False

    def _spared(self, below: str) -> bool:
        return self.spared is not None and self.spared.match(below) is not None

    def _configs(self) -> set[str]:
        """The config folder the variable names, and the default one besides (a process the
        implementer starts without the variable writes there)."""
        folders = {os.path.expanduser(f"~/{self.default}")}
        if configured := os.environ.get(self.variable, "").strip():
            folders.add(os.path.expanduser(configured))
        return {os.path.normpath(f) for f in folders} | {_real(f) for f in folders}


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)
