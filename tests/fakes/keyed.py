"""Scripts a fake model server answers by what a request says, for processes asking at once.

A fake that answers its one script in order cannot serve lanes running at the same time: whose
request comes first is a race. `Keyed` holds one script per key (a task id, say) and finds the
key in each request's raw text with a regex (its first group), so each caller gets its own
script in its own order, whatever the interleaving. A request naming no known key gets None
(the fake goes on as before: its own script, or its exhausted answer).

With `meet=n`, the first request of each key waits until n keys have asked (at most
`timeout_s`): the callers are then alive at once by construction, instead of a sleep hoping
they overlap. A meeting that never happens lets everyone go on after the timeout (and is
recorded in `missed`), so the test's own evidence of the overlap is what fails, not a hang.

With `holds`, the first request of a key named there waits until its event is set (at most
`timeout_s`): a test can keep a caller mid-run at a point it observes (`asked` names the key
once the request came), do something there (kill another process), then let it go.

With `serial`, a key's first turn (the one whose tool call the caller runs) is given to one
caller at a time: the next key's first request waits until the key before came back with its
second. Claude Code's sandbox lists a repository's `.git/config.lock` when it exists at a
command's start and the stub another sandboxed command made there may be gone by the mount
(`bwrap: Can't bind mount ... config.lock`), so lanes sharing one repository must not start
their commands at the same instant; they still run at once (`meet`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class Keyed(Generic[T]):
    def __init__(
        self,
        scripts: Mapping[str, Sequence[T]],
        pattern: str,
        *,
        meet: int = 0,
        timeout_s: float = 60.0,
        holds: Mapping[str, threading.Event] | None = None,
        serial: bool = False,
    ) -> None:
        self.scripts = {key: list(turns) for key, turns in scripts.items()}
        self.pattern = re.compile(pattern)
        self.meet = meet
        self.timeout_s = timeout_s
        # Per key: the times its requests came in (for a failure message).
        self.asked: dict[str, list[float]] = {}
        self.missed: list[str] = []
        self.holds = dict(holds or {})
        self.serial = serial
        # The key whose first turn is out and whose second request has not come yet.
        self._running: str | None = None
        self._ready = threading.Condition()

    def key(self, raw: str) -> str | None:
        for found in self.pattern.finditer(raw):
            if found.group(1) in self.scripts:
                return found.group(1)
        return None

    def __call__(self, raw: str) -> T | None:
        """The next turn of the script this request names, or None when it names none (or
        its script is used up)."""
        key = self.key(raw)
        if key is None:
            return None
        with self._ready:
            times = self.asked.setdefault(key, [])
            times.append(time.time())
            index = len(times) - 1
            if index == 1 and self._running == key:
                self._running = None
            self._ready.notify_all()
            if index == 0 and self.meet:
                met = self._ready.wait_for(lambda: len(self.asked) >= self.meet, self.timeout_s)
                if not met:
                    self.missed.append(key)
        if index == 0 and key in self.holds and not self.holds[key].wait(self.timeout_s):
            self.missed.append(key)
        if index == 0 and self.serial:
            with self._ready:
                if not self._ready.wait_for(lambda: self._running is None, self.timeout_s):
                    self.missed.append(key)
                self._running = key
        turns = self.scripts[key]
        return turns[index] if index < len(turns) else None
