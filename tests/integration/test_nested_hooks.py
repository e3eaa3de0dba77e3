"""A loop in a repository holding planted nested repositories: the plan, the edit hooks, the
Stop's review, the checks, `status` and `report` run none of their programs, and an edit
inside one still reaches the manager's review."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import Hook, cli, edit_payload, payload, plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.nested_plant import plant_all, ran


def test_no_hook_or_command_runs_what_a_nested_repository_names(
    tmp_path: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    top, markers = plant_all(tmp_path)
    manager.enqueue(plan_body(1), schema="Plan")
    argv = ["-C", str(top), "plan", "--include-dirty", "--review", "stop"]
    assert main([*argv, "--check", "true", "--session-id", "sess-1", "goal"]) == 0
    assert ran(markers) == []
    (top / "loose/a.txt").write_text("EDITED INSIDE\n")
    hook("PostToolUse", edit_payload(top, "loose/a.txt"))
    manager.enqueue(review_body("fix"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = hook("Stop", payload("Stop", top)).json
    assert out["decision"] == "block"
    assert ran(markers) == []
    # The edit inside the nested repository reached the manager, read as bytes.
    asked = str(manager.requests[-1].body)
    assert "+EDITED INSIDE" in asked and "inside a nested repository" in asked
    for command in (["status"], ["report", "--out", str(tmp_path / "page.html")]):
        code, _ = cli(capsys, "-C", str(top), *command)
        assert code == 0
    assert ran(markers) == []
