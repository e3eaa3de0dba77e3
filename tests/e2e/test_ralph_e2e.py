"""The ralph loop end to end: the real Claude Code CLI (fake Anthropic API) runs
`/autopilot-codex:ralph-loop`, the Stop hook feeds the prompt back once, and the scripted model's
promise ends the loop. No manager is involved: nothing listens at the OpenAI address."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .autopilot_helpers import ROOT, Autopilot, hook_answers, stop_blocks
from .claude_cli import ClaudeRun
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
PROMPT = "Append a line to notes.txt."


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Iterator[Autopilot]:
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def run_ralph(claude: ClaudeRunner, ap: Autopilot, arguments: str) -> ClaudeRun:
    return claude(
        f"/autopilot-codex:ralph-loop {arguments}",
        ROOT,
        extra_env=ap.env(NO_MANAGER),
        timeout=90,
    )


def test_two_iterations_then_the_promise(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    write = ToolUse("Write", {"file_path": "{workdir}/notes.txt", "content": "one\n"})
    fake_anthropic.script = [
        [Text("First pass."), write],
        [Text("Wrote the first line; more to check.")],
        [Text("Checked again: it is all there.\n<promise>NOTES WRITTEN</promise>")],
    ]
    run = run_ralph(
        claude, ap, f'--max-iterations 5 --completion-promise "NOTES WRITTEN" {PROMPT}'
    )
    assert run.ok, run.describe()
    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert len(mains) == 3, fake_anthropic.dump_log()
    assert "ralph loop started: iteration 1/5" in mains[0]
    # The one block carried the banner and the prompt back to the model.
    (block,) = stop_blocks(run)
    assert block.startswith("[autopilot-codex] Ralph iteration 2/5")
    assert block.endswith(PROMPT)
    assert "Ralph iteration 2/5" in mains[2]
    finals = hook_answers(run, "Stop")
    assert len(finals) == 2 and "decision" not in finals[-1]
    assert "promise kept at iteration 2" in finals[-1].get("systemMessage", "")

    state = ap.state()
    assert (state["style"], state["status"], state["iteration"]) == ("ralph", "done", 2)
    assert state["session_id"] == run.session_id
    result: dict[str, Any] = json.loads((ap.project_dir / "last.json").read_text())
    assert (result["why"], result["iterations"]) == ("promise", 2)
    assert ap.active_markers() == []
    assert (ap.repo / "notes.txt").read_text() == "one\n"
