"""`python -m autopilot_codex`: hooks pass the gate before anything heavy is imported."""

from __future__ import annotations

import sys


def run(*, own_process: bool = False) -> int:
    """`own_process`: started by the launcher for this command alone (see `gate.hook_main`)."""
    argv = sys.argv[1:]
    # `hook --help` is for a person: it goes to the parser, which prints the usage.
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv[1:]):
        try:
            from .gate import hook_main
        except Exception as exc:  # noqa: BLE001 - even a broken install must not break a session
            sys.stderr.write(f"autopilot-codex: hook skipped ({type(exc).__name__}: {exc})\n")
            return 0
        return hook_main(argv[1:], own_process=own_process)
    from .cli import main

    return main(argv)


if __name__ == "__main__":
    raise SystemExit(run())
