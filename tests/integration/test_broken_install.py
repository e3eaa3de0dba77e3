"""A plugin checkout broken mid-update (its gate does not even import) never breaks a session:
each hook is skipped with one line on stderr, and the host goes on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import ROOT, payload, plan_body, state_of
from tests.fakes.openai_server import FakeOpenAI


def test_a_gate_that_does_not_import_skips_the_hook(
    tmp_path: Path, repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(1), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "goal"]) == 0
    before = state_of(repo)
    skip = shutil.ignore_patterns(".venv", ".git", "tests", "bench", "__pycache__", "*.egg-info")
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=skip, symlinks=True)
    (checkout / "bridge" / "autopilot_codex" / "gate.py").write_text("def hook_main(:\n")
    data = json.dumps(payload("Stop", repo)).encode()
    done = subprocess.run(
        [str(checkout / "bin" / "autopilot-codex"), "hook", "Stop", "--host", "claude"],
        input=data,
        capture_output=True,
        cwd=repo,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable},
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.decode().startswith("autopilot-codex: hook skipped (SyntaxError: ")
    assert state_of(repo) == before and len(manager.requests) == 1
