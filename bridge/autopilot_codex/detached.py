"""Starting a bridge process that outlives the one that starts it: the shadow's snapshot worker
(`shadow/background.py`) and the resident helper (`helper.py`).

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

# The folder holding the package, as the helper's version names it (`helper.bridge_dir`).
BRIDGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120
_STDIO = ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))


def start(module: str, args: list[str], env: dict[str, str], stdin: int = -1) -> int:
    """Run `main(args)` of `module` (a module of the package, by its full name) detached, its
    stdin the descriptor `stdin` (else none); the pid. Raises OSError when it cannot start."""
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
    this process's exit."""
    import threading

    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True).start()
