from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    edit_payload,
    git,
    payload,
    plan_body,
    review_body,
    run_hook_inproc,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI


def test_full_loop(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "write", "two", "files"]) == 0
    out = capsys.readouterr().out
    assert "Task T1 (1/2)" in out
    # Planned from a terminal: the session the user types a prompt into claims it.
    prompt = payload("UserPromptSubmit", repo, prompt="go on with the plan")
    assert run_hook_inproc("UserPromptSubmit", prompt, capsys, monkeypatch).stdout == ""
    (repo / "file1.txt").write_text("one\n")
    manager.enqueue(review_body("approve"), schema="Review")
    r = run_hook_inproc("PostToolUse", edit_payload(repo), capsys, monkeypatch)
    assert r.stdout == "", r
    git(repo, "add", "file1.txt")
    git(repo, "commit", "-q", "-m", "feat: file1")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    r = run_hook_inproc("Stop", payload("Stop", repo), capsys, monkeypatch)
    assert r.json["decision"] == "block", r
    assert "Task T2" in r.json["reason"]
    manager.enqueue(verdict_body("done"), schema="Verdict")
    r = run_hook_inproc("Stop", payload("Stop", repo, stop_hook_active=True), capsys, monkeypatch)
    assert "decision" not in r.json
    assert main(["-C", str(repo), "status", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["status"] == "done"
    assert state["iteration"] == 2
