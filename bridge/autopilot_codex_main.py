"""Entry point the launcher runs as a script (cheaper than `python -m autopilot_codex`).

Its own directory is first on sys.path, so the package imports from here without PYTHONPATH.
"""

from autopilot_codex.__main__ import run

raise SystemExit(run())
