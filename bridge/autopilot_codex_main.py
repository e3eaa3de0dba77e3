"""Entry point the launcher runs as a script (cheaper than `python -m autopilot_codex`).

The launcher starts Python isolated (-I), so not even this script's directory is on sys.path:
the plugin's own bridge/ directory is put first here, by this file's location. Nothing the
implementer can write (the cwd, PYTHONPATH) is ever searched for a module.
"""

import gc
import os
import sys

if sys.argv[1:2] == ["hook"]:
    # A hook's process answers one hook and exits: its garbage is freed then. The collector's
    # passes while a hook that reached a loop loads the engine (~30 of them, ~5 ms) would only
    # walk the objects the imports create, none of them garbage (issue 35).
    gc.disable()
# `os` is loaded by the interpreter's own start; pathlib would cost every idle hook its import.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # noqa: PTH100, PTH120

from autopilot_codex.__main__ import run  # noqa: E402

raise SystemExit(run(own_process=True))
