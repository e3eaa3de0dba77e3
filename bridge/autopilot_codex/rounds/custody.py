"""What the driver keeps in its own custody: the rollout, and the handoff's objective.

A round is a program that can write anything its user can. Two files steer every later round:
the rollout, which `--resume` trusts (the goal, the checks, which round comes next), and the
handoff's objective ("Original User Request"), which every round reads as its task. So:

- The rollout lives in the state home (`<project dir>/rounds/rollout.jsonl`), never in the
  worktree, and the driver keeps its bytes in memory while it runs and its sha256 in
  `rollout.sha256.json` beside it. After every round the file must be what the driver last
  wrote, or it is put back; `--resume` refuses a rollout whose digest does not match.
- The handoff's objective is rendered from the run's goal (which the rollout holds), so the
  driver never needs a copy of it: after every round the handoff must begin with exactly that
  text, or the objective is put back. What a round wrote under `# Done` is its own and kept.

The digest is a plain sha256: it holds against a round while the driver runs (the driver
compares with its memory) and against an edit of the rollout alone; a program that rewrites
the rollout and its digest together between two runs is the wall's to stop (the state home
is out of the implementer's reach there).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from .. import nofollow
from ..errors import BridgeError
from ..fileio import atomic_write_bytes
from . import rollout
from .handoff import Handoff

ROLLOUT = "rollout.jsonl"
DIGEST = "rollout.sha256.json"
DONE = "# Done"
OBJECTIVE = "handoff objective"
ROLLOUT_NAME = "rollout"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BridgeError(f"cannot read {path}: {exc.strerror or exc}") from exc


class Custody:
    """The rollout of one worktree's runs, in the state home under the driver's digest."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ROLLOUT
        self.digest_path = folder / DIGEST
        # What the driver last wrote; None until `open` verified the file.
        self.data: bytes | None = None

    def _digest(self) -> str:
        """The digest of the driver's last write ("" when there is none or it is damaged).

        Only the last: a driver killed between writing the digest and the rollout leaves a
        rollout that `--resume` refuses (a new run sets it aside). Failing closed there costs
        a resume; vouching for an older rollout would let anyone drop the last record.
        """
        raw = _read(self.digest_path)
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return ""
        value = data.get("sha256") if isinstance(data, dict) else None
        return value if isinstance(value, str) else ""

    def problem(self) -> tuple[bytes, str]:
        """The rollout's bytes, and what is wrong with them ("" when the driver vouches)."""
        raw = _read(self.path)
        digest = self._digest()
        if raw is None:
            return b"", "" if not digest else f"the rollout {self.path} was removed"
        if sha256(raw) == digest:
            return raw, ""
        if not digest:
            return raw, f"the rollout {self.path} has no digest of the driver's"
        return raw, f"the rollout {self.path} was changed outside the driver"

    def open(self, *, resume: bool) -> tuple[list[rollout.RunLog], str]:
        """The runs recorded so far, verified; and what was wrong (a new run's tamper note).

        `--resume` refuses a rollout the driver does not vouch for. A new run needs none of
        it: a changed rollout is set aside (kept for the user) and the run starts a new one.
        """
        raw, wrong = self.problem()
        if wrong and resume:
            raise BridgeError(
                f"{wrong} (its digest does not match the one the driver kept); refusing to "
                "resume from it. Start a new run, which sets it aside."
            )
        if wrong:
            if raw:
                stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
                os.replace(self.path, self.path.with_name(f"{ROLLOUT}.changed-{stamp}"))
            raw = b""
            self._write(raw)
        self.data = raw
        return rollout.parse(raw, self.path), wrong

    def append(self, record: rollout.Record) -> None:
        assert self.data is not None, "open the custody first"
        self._write(self.data + rollout.line(record))

    def _write(self, data: bytes) -> None:
        atomic_write_bytes(self.digest_path, (json.dumps({"sha256": sha256(data)}) + "\n").encode())
        atomic_write_bytes(self.path, data)
        self.data = data

    def restore(self) -> bool:
        """Put the rollout back as the driver last wrote it; True when it had been changed."""
        assert self.data is not None, "open the custody first"
        same = not self.path.is_symlink() and _read(self.path) == self.data
        if same and sha256(self.data) == self._digest():
            return False
        self._write(self.data)
        return True


def objective_of(goal: str) -> str:
    """The protected head of a run's handoff: everything up to and including `# Done`."""
    return Handoff(goal).render()


def restore_objective(root: Path, rel: str, goal: str) -> bool:
    """Put the handoff `root/rel` back if its objective changed; True when it had.

    The notes under `# Done` are kept; a handoff replaced by a link or removed is written anew.
    Read and written inside the work tree: a link there, or on the way to it, is never followed
    (a link on the way stops the run, naming it).
    """
    head = objective_of(goal)
    kind, raw = nofollow.read(root, rel)
    notes = ""
    if kind == "file" and raw is not None:
        text = raw.decode("utf-8", "surrogateescape")
        if text.startswith(head):
            return False
        notes = _notes(text)
    nofollow.replace(root, rel, (head + notes).encode("utf-8", "surrogateescape"))
    return True


def _notes(text: str) -> str:
    """What follows the first `# Done` line: the rounds' notes."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip("\r\n") == DONE:
            return "".join(lines[i + 1 :])
    return ""
