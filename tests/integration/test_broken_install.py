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
from tests.conftest import ROOT, edit_state, payload, plan_body, state_of
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


@pytest.mark.parametrize(
    ("event", "code", "tail"),
    [
        (
            "PreToolUse",
            2,
            ". This call is denied: the loop is guarded and its supervisor could not judge it.",
        ),
        (
            "Stop",
            2,
            ". This Stop is blocked (1 of 3): the loop is guarded and its supervisor could not judge the turn; end the turn again.",
        ),
        ("PostToolUse", 0, "; this hook was skipped"),
    ],
)
def test_an_engine_that_does_not_import_fails_closed_in_a_walled_loop(
    tmp_path: Path,
    repo: Path,
    manager: FakeOpenAI,
    event: str,
    code: int,
    tail: str,
) -> None:
    """Issue 33: past the gate, a walled loop's PreToolUse and Stop are denied and blocked by
    exit code (the hosts' rc 2, reason on stderr) when the engine cannot even import."""
    manager.enqueue(plan_body(1), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "goal"]) == 0
    edit_state(repo, wall="on")
    skip = shutil.ignore_patterns(".venv", ".git", "tests", "bench", "__pycache__", "*.egg-info")
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=skip, symlinks=True)
    (checkout / "bridge" / "autopilot_codex" / "hookrun.py").write_text("def run_hook(:\n")
    data = json.dumps(payload(event, repo, tool_name="Bash", tool_input={"command": "ls"}))
    done = subprocess.run(
        [str(checkout / "bin" / "autopilot-codex"), "hook", event, "--host", "claude"],
        input=data.encode(),
        capture_output=True,
        cwd=repo,
        env={**os.environ, "AUTOPILOT_CODEX_PYTHON": sys.executable, "AUTOPILOT_CODEX_HELPER": "0"},
        timeout=120,
        check=False,
    )
    err = done.stderr.decode()
    assert (done.returncode, done.stdout) == (code, b""), err
    assert err.startswith(f"autopilot-codex: internal error in the {event} hook (SyntaxError: ")
    assert err.endswith(tail + "\n") and err.count("\n") == 1
