"""The resident helper imports, before it forks, every module an admitted hook imports: what a
child imports itself it pays for on every hook, the cost the helper exists to take away.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from autopilot_codex.cli import main
from tests.conftest import edit_state, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI

# Preload as the helper does, then run each hook in this warm process as a child would.
SCRIPT = """
import io, json, sys
from autopilot_codex import gate, helper_server

helper_server._preload()
before = set(sys.modules)
for event, raw in json.loads(sys.argv[1]):
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw.encode()))
    gate.hook_main([event, "--host", "claude"])
new = sorted(set(sys.modules) - before)
with open(sys.argv[2], "w") as out:
    json.dump(new, out)
"""


def test_a_helped_hook_imports_no_module_the_helper_did_not(
    repo: Path, manager: FakeOpenAI, tmp_path: Path
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    edit_state(repo, budget_used_usd=state_of(repo)["budget_usd"])
    bash: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": "git status"}}
    hooks = [
        ("PreToolUse", payload("PreToolUse", repo, **bash)),
        ("PostToolUse", payload("PostToolUse", repo, **bash)),
        ("Stop", payload("Stop", repo)),  # the guard stop: the budget is used up
    ]
    found = tmp_path / "new.json"
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps([(e, json.dumps(d)) for e, d in hooks]), found],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "stopped_budget" in proc.stdout  # the hooks ran the paths meant, to the end
    assert json.loads(found.read_text()) == []
