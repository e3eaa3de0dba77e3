"""`python -m autopilot_codex`: hooks pass the gate before anything heavy is imported."""

from __future__ import annotations

import sys


def run() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"]:
        from .gate import admit, read_stdin

        raw = read_stdin()
        admitted = admit(raw)
        if admitted is None:
            return 0
        from .hookrun import run_hook

        return run_hook(argv[1:], admitted)
    from .cli import main

    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run())
