"""The attack: spend in an agent record the reader does not look for. Claude Code 2.1.332
writes a subagent's messages to `<session>/subagents/agent-<id>.jsonl`, but an agent a
workflow spawns to `<session>/subagents/workflows/<run id>/agent-<id>.jsonl` (its binary's
`transcriptSubdir`), one folder deeper, where a reader of the first folder alone never
looks. Played through the real Stop hook: every agent record under the session's
`subagents` folder counts, however deep, and the loop stops on its budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import payload, state_of
from tests.integration.test_spend_records import Capsys, claude_message, hook, ralph


def test_a_workflows_agents_spend_counts(
    repo: Path, capsys: Capsys, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ralph(capsys, repo, "--max-iterations", "0", "--budget", "0.50")
    transcript = tmp_path / "projects" / "sess-1.jsonl"
    subagents = tmp_path / "projects" / "sess-1" / "subagents"
    claude_message(transcript, "m1", 10_000)  # $0.15
    run = subagents / "workflows" / "wf_0a1b2c3d"
    claude_message(run / "agent-w1.jsonl", "w1", 20_000)  # $0.30
    claude_message(run / "agent-w2.jsonl", "w2", 10_000)  # $0.15
    hook(
        "Stop",
        payload("Stop", repo, transcript_path=str(transcript)),
        capsys,
        monkeypatch,
        "claude",
    )
    state = state_of(repo)
    assert state["implementer_used_usd"] == pytest.approx(0.60)
    assert state["status"] == "stopped_budget"
