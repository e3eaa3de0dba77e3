"""Hooks stay light: no hook, and nothing a hook imports, loads DBOS or SQLAlchemy.

A durable lanes run (`lanes.flow`) needs both; a hook answers in milliseconds and can pay for
neither (DBOS alone is some 0.4 s to import). Checked in fresh interpreters started as the
launcher starts a hook (`-I -S`): the hook's modules imported, then a real hook answered.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import autopilot_codex.styles
from tests.conftest import ROOT, make_repo

HEAVY = ("dbos", "sqlalchemy")
BRIDGE = ROOT / "bridge"
MAIN = BRIDGE / "autopilot_codex_main.py"
# Where a hook's code starts (the launcher's script, the gate, the resident helper) and where
# it is dispatched to (every style's handlers, the session's end).
ENTRANCES = (
    "autopilot_codex.__main__", "autopilot_codex.gate", "autopilot_codex.hookrun",
    "autopilot_codex.helper", "autopilot_codex.helper_server", "autopilot_codex.helper_child",
    "autopilot_codex.session_end",
)  # fmt: skip


def _styles() -> list[str]:
    found = pkgutil.walk_packages(autopilot_codex.styles.__path__, "autopilot_codex.styles.")
    return ["autopilot_codex.styles", *sorted(m.name for m in found)]


def _loaded_after(code: str, *args: str, stdin: bytes = b"") -> list[str]:
    """The heavy modules loaded once `code` ran in a fresh `-I -S` interpreter, `site` loaded
    as the bridge loads it once a hook is admitted (without it DBOS could not even be found).
    `code` must run through: a probe that failed proves nothing."""
    probe = (
        "import sys, atexit, site\nsite.main()\n"
        f"atexit.register(lambda: print(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n" + code
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe, *args],
        input=stdin,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    last = done.stdout.decode().strip().splitlines()[-1]
    return list(json.loads(last.replace("'", '"')))


def test_the_hooks_modules_import_neither_dbos_nor_sqlalchemy() -> None:
    modules = [*ENTRANCES, *_styles()]
    code = f"sys.path.insert(0, {str(BRIDGE)!r})\nfor m in {modules!r}:\n    __import__(m)\n"
    assert _loaded_after(code) == []


def test_an_admitted_hook_loads_neither(tmp_path: Path) -> None:
    """A hook the gate lets through runs the whole hook path (a loop's marker is there)."""
    from autopilot_codex.paths import active_marker, find_worktree, rails_marker

    repo = make_repo(tmp_path / "r")
    text = json.dumps({"worktree": str(find_worktree(repo)), "session_id": "s1"})
    for marker in (rails_marker(repo), active_marker(repo)):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(text)
    payload = json.dumps({"cwd": str(repo), "session_id": "s1", "hook_event_name": "Stop"})
    code = (
        "import runpy\n"
        f"sys.argv = [{str(MAIN)!r}, 'hook', 'Stop', '--host', 'claude']\n"
        "try:\n"
        f"    runpy.run_path({str(MAIN)!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'autopilot_codex.hookrun' in sys.modules, 'the hook was not admitted'\n"
    )
    assert _loaded_after(code, stdin=payload.encode()) == []


def test_the_probe_sees_a_heavy_import() -> None:
    """Control: the same probe after importing DBOS says so."""
    assert _loaded_after("import dbos\n") == ["dbos", "sqlalchemy"]
