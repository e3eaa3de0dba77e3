"""A hook without the resident helper (the first one, or after it died) imports what it uses
and no more (issue 35): a review cache hit and a guard stop, each in a fresh process started
as the launcher starts a hook (`-I -S`, the launcher's script), load none of the modules named
here. Each one costs a hook milliseconds of CPU (`platform` and `shutil` with `bz2` and `lzma`
~3 ms, `subprocess` with `threading`, `signal`, `selectors` ~4 ms, `difflib` ~2.5 ms) or far
more (the manager's client, the shell grammar), and neither hook runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from autopilot_codex.cli import main
from tests.conftest import (
    ROOT,
    edit_payload,
    edit_state,
    payload,
    plan_body,
    review_body,
    state_of,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import wait_reviews, wait_shadow

MAIN = ROOT / "bridge" / "autopilot_codex_main.py"
# Never loaded by a cache hit or a guard stop.
HEAVY = (
    "platform", "shutil", "difflib", "tempfile", "datetime", "ctypes", "socket", "asyncio",
    "email", "http", "sqlite3", "pydantic", "openai", "httpx", "tree_sitter", "dbos",
)  # fmt: skip
# A guard stop starts no process but a snapshot worker, which `posix_spawn` starts (a thread
# reaps it).
NOT_IN_A_GUARD_STOP = ("subprocess", "signal", "selectors")

PROBE = """
import atexit, json, runpy, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
sys.argv = [sys.argv[1], "hook", sys.argv[2], "--host", "claude"]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
"""


def _cold(event: str, data: dict[str, Any], cwd: Path) -> tuple[str, set[str]]:
    """The hook in a fresh `-I -S` process, helper off: its stdout and the modules it loaded."""
    # Unmeasured: under the suite's coverage the hook's late `site.main()` would start the
    # coverage package, whose own imports (sqlite3, datetime, ...) are not the hook's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(MAIN), event],
        input=json.dumps(data).encode(),
        capture_output=True,
        cwd=cwd,
        env=env,
        check=False,
        timeout=120,
    )
    err = done.stderr.decode()
    assert done.returncode == 0 and "MODULES " in err, err
    loaded = set(json.loads(err.rsplit("MODULES ", 1)[1].splitlines()[0]))
    assert "autopilot_codex.hookrun" in loaded, "the hook was not admitted"
    return done.stdout.decode(), loaded


def test_a_cache_hit_and_a_guard_stop_load_no_module_they_do_not_use(
    repo: Path, manager: FakeOpenAI
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    manager.enqueue(review_body("approve"), schema="Review")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    (repo / "file1.txt").write_text("one\n")
    _cold("PostToolUse", edit_payload(repo), repo)  # reviewed by a worker
    wait_reviews(repo)
    wait_shadow(repo)
    reviews = len(manager.requests_for(schema="Review"))

    out, loaded = _cold("PostToolUse", edit_payload(repo), repo)  # the same diff: cached
    wait_reviews(repo)
    wait_shadow(repo)
    assert len(manager.requests_for(schema="Review")) == reviews == 1
    assert sorted(loaded & set(HEAVY)) == []

    edit_state(repo, budget_used_usd=state_of(repo)["budget_usd"])
    out, loaded = _cold("Stop", payload("Stop", repo), repo)
    assert "stopped_budget" in out
    assert sorted(loaded & {*HEAVY, *NOT_IN_A_GUARD_STOP}) == []


def test_the_probe_sees_what_a_hook_loads(repo: Path) -> None:
    """Control: a module the hook path loads is seen (the probe reads the hook's own process)."""
    from autopilot_codex.paths import active_marker, find_worktree, rails_marker

    text = json.dumps({"worktree": str(find_worktree(repo)), "session_id": "sess-1"})
    for marker in (rails_marker(repo), active_marker(repo)):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(text)
    _, loaded = _cold("Stop", payload("Stop", repo), repo)
    assert {"dataclasses", "pathlib", "autopilot_codex.store"} <= loaded
