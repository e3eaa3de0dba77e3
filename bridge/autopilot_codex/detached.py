"""Starting a bridge process that outlives the one that starts it: the shadow's snapshot worker
(`shadow/background.py`), the review worker, the notifier and the resident helper (`helper.py`).

In a child of the resident helper (`helper_child`), a worker is asked of the helper instead
(`ASK`): it forks the worker from its warm image (`helper_workers`), so neither the hook waits
for an exec nor the worker redoes the engine's imports.

Isolated (-I: no PYTHON* variables, no user site, no cwd on sys.path), with the plugin's own
bridge/ directory put first by its location; in a session of its own with no stdio, so the host
neither waits for it nor kills it with the hook. posix_spawn, not Popen: a few milliseconds
less on the hook's path. Only the descriptors the caller made inheritable go with it; the
environment is the caller's to choose. Standard library only: the helper's start runs on the
hook's path.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Ask = Callable[[str, list[str], dict[str, str], str, dict[int, int]], "int | None"]

# The folder holding the package, as the helper's version names it (`helper.bridge_dir`).
BRIDGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120
_STDIO = ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))
# The only modules a helper forks a worker of (`helper_workers`): each one's `main(argv)`.
WORKERS = frozenset(
    {
        "autopilot_codex.shadow.background",
        "autopilot_codex.styles.autopilot.background",
        "autopilot_codex.notify",
    }
)
# Set in a child of the resident helper only (`helper_child`): asks the helper to fork a worker
# (module, args, env, cwd, descriptors kept: {number in the worker: descriptor here}) and
# returns its pid, or None when the helper refused (nothing started: start it here). Raises
# OSError when the helper may or may not have started it.
ASK: Ask | None = None
# The workers the helper forked: its children, not ours to reap.
_THEIRS: set[int] = set()


def forked(
    module: str,
    args: list[str],
    env: dict[str, str],
    cwd: str = ".",
    keep: dict[int, int] | None = None,
) -> int | None:
    """The pid of the worker the resident helper forked for this process's hook, or None when
    this process is no child of a helper (or the helper refused): start it here then."""
    if ASK is None:
        return None
    pid = ASK(module, args, env, cwd, keep or {})
    if pid is not None:
        _THEIRS.add(pid)
    return pid


def start(
    module: str, args: list[str], env: dict[str, str], stdin: int = -1, keep: tuple[int, ...] = ()
) -> int:
    """Run `main(args)` of `module` (a module of the package, by its full name) detached, its
    stdin the descriptor `stdin` (else none), `keep` descriptors at their numbers (made
    inheritable by the caller); the pid. Raises OSError when it cannot start."""
    held = {fd: fd for fd in keep}
    if stdin >= 0:
        held[0] = stdin
    pid = forked(module, args, env, ".", held)
    if pid is not None:
        return pid
    boot = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        f"from {module} import main; raise SystemExit(main(sys.argv[2:]))"
    )
    return os.posix_spawn(
        sys.executable,
        [sys.executable, "-I", "-c", boot, BRIDGE, *args],
        env,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin, 0)
            if fd == 0 and stdin >= 0
            else (os.POSIX_SPAWN_OPEN, fd, os.devnull, flags, 0)
            for fd, flags in _STDIO
        ],
        setsid=True,
    )


def reap(pid: int) -> None:
    """Reap `pid` when it ends, should this process still be there; a daemon thread never holds
    this process's exit. A worker the helper forked is the helper's to reap."""
    if pid in _THEIRS:
        return
    import threading

    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True).start()
