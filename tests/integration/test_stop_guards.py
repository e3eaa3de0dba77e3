"""Guards that an earlier suite let regress unnoticed: a cached blocking review at a Stop counts
toward the stall guard, a stop-mode Stop on an empty diff reaches its verdict, and no-progress
is measured from the last verdict's commit, not the loop's base."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.cli import main
from tests.conftest import (
    Hook,
    git,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", mode, "--session-id", "sess-1", "goal"]) == 0
    capsys.readouterr()


def test_a_cached_blocking_review_at_a_stop_counts_toward_the_stall_guard(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    (repo / "file1.txt").write_text("wrong\n")
    manager.enqueue(review_body("fix"), schema="Review")
    answers = [hook("Stop", payload("Stop", repo, stop_hook_active=n > 0)).json for n in range(4)]
    # One review paid for (folded into the first Stop's call); the same diff replayed from
    # the cache at each later Stop.
    assert [r.schema_name for r in manager.requests[1:]] == ["Judgement"]
    assert [a.get("decision") for a in answers[:3]] == ["block"] * 3
    assert answers[3].get("decision") != "block"  # the third block was the stall limit
    state = state_of(repo)
    assert state["status"] == "paused" and "stalled" in state["stop_reason"]


def test_a_stop_mode_stop_on_an_empty_diff_asks_for_the_verdict(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = hook("Stop", payload("Stop", repo)).json
    assert manager.requests_for(schema="Review") == []
    assert len(manager.requests_for(schema="Verdict")) == 1
    assert out["decision"] == "block"
    assert state_of(repo)["iteration"] == 1


def test_no_progress_counts_from_the_last_verdicts_commit(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "off")
    (repo / "file1.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "T1")  # progress: HEAD is past the loop's base from now on
    for turn in range(5):
        manager.enqueue(verdict_body("continue"), schema="Verdict")
        hook("Stop", payload("Stop", repo, stop_hook_active=turn > 0))
        hook("PostToolUse", payload("PostToolUse", repo, tool_name="Bash"))
        if state_of(repo)["status"] != "running":
            break
    state = state_of(repo)
    # The first verdict saw the new commit; the next three saw none and the loop aborted.
    assert state["status"] == "aborted", state
    assert "without a new commit" in state["stop_reason"]
    assert state["iteration"] == 4
