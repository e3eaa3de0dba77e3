"""A walled git outlives its caller, for a bounded time.

The wall dies with its parent (bubblewrap's `--die-with-parent`), so that nothing the bridge
started runs on unsupervised. For a git call that is the wrong end: a bridge killed while its
git holds a lock (a hook killed at the host's timeout, a `run` driver killed with -9) took the
git down with it, and the lock it held (`index.lock`, a ref's `.lock`, `packed-refs.lock`)
stayed: every later git call in that repository then fails until the user removes it by hand.

So the walled git is started under the system's `timeout`: its parent is `timeout`, not the
bridge. When the bridge dies, `timeout` lives on, the git finishes its short work and releases
its lock; a git that never ends is killed at the limit all the same. The bridge's own timer
still kills `timeout` first on a call that overruns, and the wall goes with it. `timeout` is
found like git (`gitbinary.system_program`): a root-owned file in a system place, never from PATH.
Without one, the call runs as before. An unwalled git (no sandbox on this machine) is started
the same way: it never died with the bridge, but neither should it run on forever.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..gitbinary import system_program

PLACES = ("/usr/bin/timeout", "/bin/timeout")
# After the bridge's own limit: its timer, when alive, always ends an overrunning call first.
GRACE_S = 5


def bounded(command: Sequence[str], limit_s: float) -> list[str]:
    """`command` run under `timeout`, killed `GRACE_S` after `limit_s` whoever is left."""
    binary = system_program(PLACES)
    if binary is None:
        return list(command)
    return [binary, "--signal=KILL", f"{limit_s + GRACE_S:g}", *command]
