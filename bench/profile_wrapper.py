"""Run `python -m autopilot_codex hook ...` with timers around its imports, the git processes it
starts and its fsyncs. Used by bench/hook_profile.py; prints one JSON line to stderr, last.

    <python> bench/profile_wrapper.py hook PostToolUse --host claude < payload.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

GIT: list[tuple[str, float]] = []
FSYNC_MS: list[float] = []
_run = subprocess.run
_fsync = os.fsync


def _label(argv: object) -> str:
    """The git subcommand and its plain words: no options, pathspecs or commit ids."""
    words = [str(w) for w in argv] if isinstance(argv, (list, tuple)) else [str(argv)]
    kept = [
        w
        for w in words[1:]
        if not w.startswith(("-", ":"))
        and w not in ("core.quotepath=off", ".")
        and not (len(w) == 40 and all(c in "0123456789abcdef" for c in w))
    ]
    return " ".join(kept)[:60]


def _timed_run(*args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    try:
        return _run(*args, **kwargs)
    finally:
        GIT.append(
            (_label(args[0] if args else kwargs.get("args")), (time.perf_counter() - start) * 1000)
        )


def _timed_fsync(fd: FileDescriptorLike) -> None:
    start = time.perf_counter()
    _fsync(fd)
    FSYNC_MS.append((time.perf_counter() - start) * 1000)


def main() -> int:
    subprocess.run = _timed_run
    os.fsync = _timed_fsync
    before = set(sys.modules)
    start = time.perf_counter()
    from autopilot_codex.__main__ import run

    sys.argv = ["autopilot-codex", *sys.argv[1:]]
    code = run()
    times = {
        "hook_ms": (time.perf_counter() - start) * 1000,
        "git": GIT,
        "fsync_ms": sum(FSYNC_MS),
        "fsyncs": len(FSYNC_MS),
        "modules": len(set(sys.modules) - before),
    }
    sys.stderr.write("\nPROFILE " + json.dumps(times) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
