"""The run's folder in the worktree: the handoff file, the knowledge base, the git exclude.

The handoff file is the only thing a fresh round knows about the task, so it is written once,
self-contained, and never overwritten (a second run on the same day gets a new name).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from .. import nofollow
from ..errors import BridgeError
from ..gitrepo import git_path

WORKSPACE = ".autopilot-codex"
EXCLUDE_LINE = f"/{WORKSPACE}/"
SLUG_MAX = 40

KB_README = """# Knowledge base

Notes that rounds share: high-level facts about this project and where things live in the code.
Read this index at the start of a round; after exploring a module or a tricky topic, write a
short note in this folder and add a line for it below. Code is the source of truth: fix a note
as soon as it disagrees with the code. This folder is git-ignored and never committed.

## Index
"""


@dataclass(frozen=True)
class Handoff:
    request: str
    context: tuple[str, ...] = ()
    data: str = ""

    def render(self) -> str:
        context = "\n".join(f"- {line}" for line in self.context) or "- (none given)"
        return (
            "# Objective\n\n"
            f"## Original User Request\n{self.request.strip()}\n\n"
            f"## Important Context, Constraints, and User Preferences\n{context}\n\n"
            f"## Critical Data, Examples, and References\n{self.data.strip() or '(none given)'}\n\n"
            "# Done\n"
        )


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        candidate = f"{out}_{word}" if out else word
        if len(candidate) > SLUG_MAX:
            break
        out = candidate
    return out or (words[0][:SLUG_MAX] if words else "objective")


def write_handoff(worktree: Path, handoff: Handoff, *, today: date) -> Path:
    """Create the handoff file; an existing file (or link) of the same name is never touched."""
    folder = f"{WORKSPACE}/handoffs"
    stem = f"{today:%Y_%m_%d}_{slug(handoff.request)}"
    data = handoff.render().encode("utf-8")
    for n in range(1, 1000):
        name = f"{folder}/{stem}.md" if n == 1 else f"{folder}/{stem}_{n}.md"
        if nofollow.create_new(worktree, name, data):
            return worktree / name
    raise BridgeError(f"too many handoff files named {stem}_N.md in {worktree / folder}")


def prepare(worktree: Path) -> Path:
    """The run's folder with its knowledge base, git-ignored through the repository's exclude.

    `.git/info/exclude` rather than `.gitignore`: the user's tracked files stay untouched.
    Both in reach of a round: written without following a link (a link on the way stops the
    run, naming it; a link at the README is replaced).
    """
    readme = f"{WORKSPACE}/kb/README.md"
    if nofollow.read(worktree, readme)[0] != "file":
        nofollow.replace(worktree, readme, KB_README.encode("utf-8"))
    exclude = git_path(worktree, "info/exclude")
    git_dir, rel = exclude.parent.parent, "info/exclude"
    kind, current = nofollow.read(git_dir, rel)
    lines = (current or b"").decode("utf-8", "replace").splitlines() if kind == "file" else []
    if EXCLUDE_LINE not in lines:
        sep = b"\n" if current and kind == "file" and not current.endswith(b"\n") else b""
        with os.fdopen(nofollow.open_write(git_dir, rel, append=True), "ab") as handle:
            handle.write(sep + f"{EXCLUDE_LINE}\n".encode())
    return worktree / WORKSPACE
