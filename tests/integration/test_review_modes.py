"""AUTOPILOT_CODEX_REVIEW selects when diffs are reviewed: edit, commit, stop or off."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.manager.attempts import TRANSIENT_ATTEMPTS
from autopilot_codex.paths import project_dir
from tests.conftest import (
    Hook,
    edit_payload,
    git,
    payload,
    plan_body,
    review_body,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reviews import review_requests, wait_reviews


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--review", mode, "--session-id", "sess-1", "goal"]) == 0
    capsys.readouterr()


def bash(repo: Path, command: str) -> dict[str, Any]:
    return payload("PostToolUse", repo, tool_name="Bash", tool_input={"command": command})


def reviews(manager: FakeOpenAI) -> int:
    return len(review_requests(manager))


def test_edit_mode_reviews_each_edit(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "edit")
    for n in (1, 2):
        (repo / "file1.txt").write_text(f"v{n}\n")
        manager.enqueue(review_body(), schema="Review")
        assert hook("PostToolUse", edit_payload(repo)).stdout == ""
        wait_reviews(repo)
    assert reviews(manager) == 2
    hook("PostToolUse", bash(repo, "ls"))
    wait_reviews(repo)
    assert reviews(manager) == 2


def test_commit_mode_reviews_only_after_a_commit(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "commit")
    (repo / "file1.txt").write_text("v1\n")
    hook("PostToolUse", edit_payload(repo))
    hook("PostToolUse", bash(repo, "pytest"))
    assert reviews(manager) == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feat: file1")
    manager.enqueue(review_body("fix"), schema="Review")
    assert hook("PostToolUse", bash(repo, "git commit -qm 'feat: file1'")).stdout == ""
    wait_reviews(repo)
    assert reviews(manager) == 1
    # The same commit is not reviewed again by the next shell command, which hands the fix over.
    out = hook("PostToolUse", bash(repo, "git log")).json
    wait_reviews(repo)
    assert out["decision"] == "block"
    assert reviews(manager) == 1


def test_stop_mode_reviews_and_judges_in_one_call(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    (repo / "file1.txt").write_text("v1\n")
    hook("PostToolUse", edit_payload(repo))
    assert reviews(manager) == 0
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    out = hook("Stop", payload("Stop", repo)).json
    assert out["decision"] == "block" and "Manager verdict: continue" in out["reason"]
    # One manager latency for the Stop: the review of the final diff rides on the verdict's call.
    assert [r.schema_name for r in manager.requests[1:]] == ["Judgement"]
    assert "+v1" in manager.requests[-1].prompt_text


def test_16_a_stop_in_stop_mode_keeps_one_deadline_for_its_review_and_verdict(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 27, item 16: the review of the final diff and the verdict were two calls, each with
    the whole timeout; now they are one call, and its attempts share the call's one deadline."""
    start(repo, manager, capsys, "stop")
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "2")
    never = threading.Event()  # the manager never answers (released when the server closes)
    manager.default = Reply(body=verdict_body("continue"), hold=never)
    (repo / "file1.txt").write_text("v1\n")
    hook("PostToolUse", edit_payload(repo))
    out = hook("Stop", payload("Stop", repo)).json
    assert "decision" not in out and "manager unavailable" in out["systemMessage"]
    calls = [r.schema_name for r in manager.requests[1:]]
    # One call: no Review then Verdict, and no more attempts than one deadline allows.
    assert set(calls) == {"Judgement"} and 1 <= len(calls) <= TRANSIENT_ATTEMPTS, calls
    assert "timed out" in json.loads((project_dir(repo) / "state.json").read_text())["stop_reason"]


def test_stop_mode_fix_blocks_without_a_verdict(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "stop")
    (repo / "file1.txt").write_text("wrong\n")
    manager.enqueue(review_body("fix"), schema="Review")
    out = hook("Stop", payload("Stop", repo)).json
    assert out["decision"] == "block" and "fix before going on" in out["reason"]
    assert manager.requests_for(schema="Verdict") == []
    state = json.loads((project_dir(repo) / "state.json").read_text())
    # A review's Stop block is a turn like a verdict's: the iteration cap and the stall
    # guard count it (issue 23).
    assert state["iteration"] == 1
    assert state["idle_stop_blocks"] == 1


def test_off_mode_only_judges(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "off")
    (repo / "file1.txt").write_text("v1\n")
    hook("PostToolUse", edit_payload(repo))
    manager.enqueue(verdict_body("done"), schema="Verdict")
    hook("Stop", payload("Stop", repo))
    assert reviews(manager) == 0
    assert len(manager.requests_for(schema="Verdict")) == 1


def test_environment_overrides_the_mode_chosen_at_plan_time(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start(repo, manager, capsys, "edit")
    monkeypatch.setenv("AUTOPILOT_CODEX_REVIEW", "off")
    (repo / "file1.txt").write_text("v1\n")
    hook("PostToolUse", edit_payload(repo))
    wait_reviews(repo)
    assert reviews(manager) == 0


def test_secrets_and_state_never_reach_the_manager(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # State home inside the repository: its files must still never be diffed or sent.
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(repo / ".autopilot-state"))
    start(repo, manager, capsys, "edit")
    (repo / ".env").write_text("DB_PASSWORD=hunter2-secret\n")
    (repo / "id_rsa").write_text(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    (repo / "config.py").write_text('TOKEN = "sk-live-abcdefghijklmnopqrstuvwx"\n')
    manager.enqueue(review_body(), schema="Review")
    hook("PostToolUse", edit_payload(repo, "config.py"))
    wait_reviews(repo)
    text = review_requests(manager)[0].prompt_text
    assert "config.py" in text
    assert "hunter2" not in text and "BEGIN OPENSSH" not in text
    assert "sk-live-abcdefghijklmnopqrstuvwx" not in text and "[REDACTED]" in text
    assert '"status"' not in text and "events.jsonl" not in text


def test_oversized_diffs_are_summarised_within_the_cap(
    repo: Path,
    manager: FakeOpenAI,
    hook: Hook,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_PROMPT_CHARS", "8000")
    start(repo, manager, capsys, "edit")
    for n in range(20):
        (repo / f"big{n}.txt").write_text("".join(f"line {i} of file {n}\n" for i in range(400)))
    manager.enqueue(review_body(), schema="Review")
    hook("PostToolUse", edit_payload(repo, "big0.txt"))
    wait_reviews(repo)
    request = review_requests(manager)[0]
    assert len(request.prompt_text) <= 8000 + 10
    assert "per-file summary" in request.prompt_text
    assert "big19.txt  +400 -0" in request.prompt_text


def test_hook_from_a_subdirectory_finds_the_loop(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys, "edit")
    sub = repo / "pkg" / "deep"
    sub.mkdir(parents=True)
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    assert hook("Stop", payload("Stop", sub)).json["decision"] == "block"


def test_hook_from_a_non_git_directory_is_silent(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    start(repo, manager, capsys, "edit")
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    result = hook("Stop", payload("Stop", elsewhere))
    assert (result.code, result.stdout) == (0, "")
