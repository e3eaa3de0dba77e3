"""Tamper evidence behind the rails: what the bridge last wrote, so a state or plan file that
anything else wrote (edited, replaced, removed while running) is noticed at the next hook.

The rails are a denylist, not a sandbox; this is how what slips past them is caught. The
witness holds the digests of the last two state writes (a crash between writing the witness
and the state leaves the older one on disk, and that must still pass), the plan's digest, and
the text of the last state written, from which a loop stopped for tampering is restored:
the changed file is kept aside for the user, never trusted, and nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class Witness:
    states: tuple[str, ...] = ()
    plan: str = ""
    last: str = ""

    def vouches(self, text: str) -> bool:
        return digest(text) in self.states

    def after(self, text: str, on_disk: str | None) -> Witness:
        """The witness of one more state write of `text` over the file `on_disk` now holds.

        The file on disk stays vouched for until the write lands (a writer killed in between
        leaves it there); it is carried over only if this witness vouched for it already, so a
        changed file is never laundered by the next save.
        """
        keep = digest(on_disk) if on_disk is not None and self.vouches(on_disk) else None
        recent = (keep, digest(text)) if keep else (digest(text),)
        return Witness(recent, self.plan, text)

    def to_json(self) -> str:
        data = {"states": list(self.states), "plan": self.plan, "last": self.last}
        return json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n"


def read(path: Path) -> Witness | None:
    """None when there is no witness (a loop from before it existed): nothing to check against.

    A damaged witness is treated the same way, so damage to it can never stop a loop by itself.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    states = data.get("states")
    plan, last = data.get("plan"), data.get("last")
    if not (isinstance(states, list) and all(isinstance(s, str) for s in states)):
        return None
    return Witness(tuple(states), plan if isinstance(plan, str) else "", last if isinstance(last, str) else "")
