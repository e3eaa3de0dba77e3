"""Hook stdin -> stdout golden cases for every event, with a real repo and the fake manager."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.commands.status import status
from autopilot_codex.commands.stop import stop
from autopilot_codex.paths import active_marker, project_dir
from autopilot_codex.store import Store
from tests.conftest import (
    Hook,
    edit_payload,
    edit_state,
    git,
    payload,
    plan_body,
    review_body,
    run_launcher,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reviews import review_requests, verdict_requests, wait_reviews


def read_payload(cwd: Path) -> dict[str, Any]:
    return payload("PostToolUse", cwd, tool_name="Read", tool_input={"file_path": "x"})


@pytest.fixture
def planned(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> Path:
    manager.enqueue(plan_body(2), schema="Plan")
    assert main(["-C", str(repo), "plan", "--session-id", "sess-1", "write", "files"]) == 0
    capsys.readouterr()
    return repo


def events_of(repo: Path) -> list[dict[str, Any]]:
    path = project_dir(repo) / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- no loop ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "event", ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "PreCompact"]
)
def test_no_loop_every_event_is_silent(repo: Path, hook: Hook, event: str) -> None:
    result = hook(
        event,
        payload(event, repo, tool_name="Bash", tool_input={"command": "ls"}, source="compact"),
    )
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse", "Stop"])
def test_launcher_with_no_loop_answers_without_python(repo: Path, event: str) -> None:
    # A python that does not exist proves the launcher never started one.
    result = run_launcher(
        ["hook", event, "--host", "claude"],
        json.dumps(payload(event, repo)).encode(),
        env={"AUTOPILOT_CODEX_PYTHON": "/nonexistent/python"},
    )
    assert (result.code, result.stdout, result.stderr) == (0, "", "")


# -- running loop -----------------------------------------------------------------------------


def test_edit_approved_is_silent_and_recorded(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (planned / "file1.txt").write_text("one\n")
    manager.enqueue(review_body("approve"), schema="Review")
    result = hook("PostToolUse", edit_payload(planned))
    assert (result.code, result.stdout) == (0, "")
    state = wait_reviews(planned)
    assert state["autopilot"]["last_review"]["decision"] == "approve"
    assert state["autopilot"]["pending_review"] is None
    assert state["tool_events"] == 1
    assert "+one" in manager.requests_for(schema="Review")[0].prompt_text


def test_edit_fix_blocks_the_next_tool_with_findings(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (planned / "file1.txt").write_text("wrong\n")
    manager.enqueue(review_body("fix"), schema="Review")
    # The edit's own hook answers at once; the review comes back in the background ...
    assert hook("PostToolUse", edit_payload(planned)).stdout == ""
    wait_reviews(planned)
    # ... and the next hook that can speak hands it over, once.
    result = hook("PostToolUse", read_payload(planned))
    out = result.json
    assert set(out) == {"decision", "reason"}
    assert out["decision"] == "block"
    assert "[high] wrong content (file1.txt:1-2)" in out["reason"]
    assert "Fix: write the right content" in out["reason"]
    assert hook("PostToolUse", read_payload(planned)).stdout == ""
    assert events_of(planned)[-1]["event"] == "review.fix.delivered"


def test_edit_reject_blocks_with_revert_instruction(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (planned / "file1.txt").write_text("bad approach\n")
    manager.enqueue(review_body("reject"), schema="Review")
    assert hook("PostToolUse", edit_payload(planned)).stdout == ""
    wait_reviews(planned)
    out = hook("PostToolUse", edit_payload(planned)).json
    base = state_of(planned)["autopilot"]["task_base_sha"][:12]
    assert out["decision"] == "block"
    assert f"git restore --source={base} --staged --worktree -- file1.txt" in out["reason"]


def test_identical_diff_is_never_reviewed_twice(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    (planned / "file1.txt").write_text("wrong\n")
    manager.enqueue(review_body("fix"), schema="Review")
    hook("PostToolUse", edit_payload(planned))
    wait_reviews(planned)
    first = hook("PostToolUse", edit_payload(planned))
    wait_reviews(planned)
    second = hook("PostToolUse", edit_payload(planned))
    wait_reviews(planned)
    assert first.json["decision"] == "block"
    assert second.stdout == ""
    assert len(manager.requests_for(schema="Review")) == 1
    # At the Stop the cached fix is replayed without a call: ending the turn cannot skip it.
    stop = hook("Stop", payload("Stop", planned))
    assert stop.json["reason"] == first.json["reason"]
    assert len(manager.requests_for(schema="Review")) == 1
    assert [e["event"] for e in events_of(planned)][-1] == "review.cached"


def test_non_edit_tools_only_count_activity(planned: Path, manager: FakeOpenAI, hook: Hook) -> None:
    result = hook(
        "PostToolUse",
        payload("PostToolUse", planned, tool_name="Read", tool_input={"file_path": "x"}),
    )
    assert result.stdout == ""
    assert manager.requests_for(schema="Review") == []
    assert state_of(planned)["tool_events"] == 1


def test_empty_diff_is_not_reviewed(planned: Path, manager: FakeOpenAI, hook: Hook) -> None:
    assert hook("PostToolUse", edit_payload(planned)).stdout == ""
    wait_reviews(planned)
    assert manager.requests_for(schema="Review") == []


def test_stop_continue_blocks_with_next_task(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    # The task is committed: a task advances only on the manager's word and a new commit.
    commit_file(planned, "file1.txt")
    # The Stop reviews the final diff (edit mode) and asks for the verdict in one call.
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(
        verdict_body("continue", done=True, instructions="Now do T2 carefully."), schema="Verdict"
    )
    out = hook("Stop", payload("Stop", planned, last_assistant_message="T1 finished")).json
    assert out["decision"] == "block"
    assert "Task T2 (2/2): task number 2" in out["reason"]
    assert "Now do T2 carefully." in out["reason"]
    assert "MESSAGE" in verdict_requests(manager)[0].prompt_text
    assert "T1 finished" in verdict_requests(manager)[0].prompt_text
    state = state_of(planned)
    assert (
        state["iteration"],
        state["autopilot"]["current_task"],
        state["autopilot"]["completed_tasks"],
    ) == (
        1,
        "T2",
        ["T1"],
    )


@pytest.mark.parametrize(("decision", "status"), [("done", "done"), ("abort", "aborted")])
def test_stop_terminal_verdicts_allow_with_a_banner(
    planned: Path, manager: FakeOpenAI, hook: Hook, decision: str, status: str
) -> None:
    manager.enqueue(verdict_body(decision), schema="Verdict")
    out = hook("Stop", payload("Stop", planned)).json
    assert set(out) == {"systemMessage"}
    assert status in out["systemMessage"]
    assert state_of(planned)["status"] == status
    # A clean `done` takes the rails off; an abort keeps them until the user's stop.
    assert active_marker(planned).exists() == (status != "done")
    # Once finished, the loop's own hooks are silent no-ops.
    assert hook("Stop", payload("Stop", planned)).stdout == ""


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=500),
        Reply(status=429, error_code="insufficient_quota"),
        Reply(status=401),
        Reply(text="prose"),
    ],
    ids=["500", "quota", "auth", "invalid"],
)
def test_manager_trouble_pauses_and_never_blocks(
    planned: Path, manager: FakeOpenAI, hook: Hook, reply: Reply, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "3")
    manager.enqueue(*[reply] * 4, schema="Verdict")
    out = hook("Stop", payload("Stop", planned)).json
    assert "decision" not in out
    assert "paused" in out["systemMessage"]
    state = state_of(planned)
    assert state["status"] == "paused"
    assert state["stop_reason"].startswith("manager unavailable")


def test_other_session_is_ignored_without_cost(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    before = state_of(planned)
    (planned / "file1.txt").write_text("x\n")
    for event, data in [
        ("PostToolUse", edit_payload(planned, session="other")),
        ("Stop", payload("Stop", planned, session="other")),
    ]:
        assert hook(event, data).stdout == ""
    assert len(manager.requests) == 1  # the plan only
    after = state_of(planned)
    assert after == before


def test_an_unclaimed_loop_is_claimed_by_the_first_typed_prompt_only(
    repo: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.enqueue(plan_body(), schema="Plan")
    main(["-C", str(repo), "plan", "goal"])
    capsys.readouterr()
    assert state_of(repo)["session_id"] is None
    # Tool, compaction and Stop hooks never claim (a nested session's would come first).
    hook("PostToolUse", payload("PostToolUse", repo, session="nested", tool_name="Read"))
    hook("PreCompact", payload("PreCompact", repo, session="nested", trigger="auto"))
    hook("Stop", payload("Stop", repo, session="nested"))
    assert state_of(repo)["session_id"] is None
    hook("UserPromptSubmit", payload("UserPromptSubmit", repo, session="first", prompt="go"))
    assert state_of(repo)["session_id"] == "first"
    hook("UserPromptSubmit", payload("UserPromptSubmit", repo, session="second", prompt="go"))
    assert state_of(repo)["session_id"] == "first"
    hook("Stop", payload("Stop", repo, session="second"))
    assert state_of(repo)["iteration"] == 0


def test_stopped_loop_hooks_are_noops(
    planned: Path, manager: FakeOpenAI, hook: Hook, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(planned), "stop", "enough"]) == 0
    capsys.readouterr()
    assert hook("Stop", payload("Stop", planned)).stdout == ""
    assert len(manager.requests) == 1
    assert state_of(planned)["stop_reason"] == "enough"


def test_session_start_after_compaction_reinjects_the_task(planned: Path, hook: Hook) -> None:
    out = hook("SessionStart", payload("SessionStart", planned, source="compact")).json
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Task T1 (1/2)" in out["hookSpecificOutput"]["additionalContext"]
    assert hook("SessionStart", payload("SessionStart", planned, source="startup")).stdout == ""


def test_pretooluse_denies_a_force_push(planned: Path, hook: Hook) -> None:
    data = payload(
        "PreToolUse",
        planned,
        tool_name="Bash",
        tool_input={"command": "git push --force origin main"},
    )
    out = hook("PreToolUse", data).json
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "force-push" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_pretooluse_denies_writing_the_hosts_own_transcript(
    planned: Path, hook: Hook, tmp_path: Path
) -> None:
    transcript = tmp_path / "user-home" / ".claude" / "projects" / "-repo" / "sess-1.jsonl"
    data = payload(
        "PreToolUse", planned, tool_name="Write", tool_input={"file_path": str(transcript)}
    )
    out = hook("PreToolUse", data).json
    specific = out["hookSpecificOutput"]
    assert (specific["hookEventName"], specific["permissionDecision"]) == ("PreToolUse", "deny")
    assert specific["permissionDecisionReason"].startswith(
        f"autopilot-codex safety rail [spend-records]: {transcript} holds the host's own record "
        "of what the implementer spends; the loop's budget is read from it, so it may be read, "
        "never changed. This is blocked while the loop runs"
    ), specific["permissionDecisionReason"]
    read = payload(
        "PreToolUse", planned, tool_name="Read", tool_input={"file_path": str(transcript)}
    )
    assert hook("PreToolUse", read).stdout == ""


def test_pretooluse_allows_ordinary_commands(planned: Path, hook: Hook) -> None:
    data = payload(
        "PreToolUse",
        planned,
        tool_name="Bash",
        tool_input={"command": "pytest -q && git commit -am 'feat: x'"},
    )
    assert hook("PreToolUse", data).stdout == ""


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [b"", b"   ", b"{not json", b"[1, 2]", b"\xff\xfe\x00garbage", b'"a string"', b"null"],
    ids=["empty", "blank", "malformed", "array", "binary", "string", "null"],
)
@pytest.mark.parametrize("event", ["PostToolUse", "Stop", "PreToolUse"])
def test_garbage_stdin_never_blocks(
    planned: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch, raw: bytes, event: str
) -> None:
    monkeypatch.chdir(planned)
    result = hook(event, raw)
    assert result.code == 0
    assert result.stdout == ""
    # A payload without a session reaches only the rails (which say what they ignored): the
    # loop's own events are the owner's.
    assert ("autopilot-codex" in result.stderr) == (event == "PreToolUse")
    assert state_of(planned)["status"] == "running"


def test_missing_fields_are_harmless(planned: Path, hook: Hook, manager: FakeOpenAI) -> None:
    result = hook("Stop", {"cwd": str(planned)})
    assert (result.code, result.stdout) == (0, "")
    assert len(manager.requests) == 1


def test_corrupt_state_is_moved_aside_with_a_clear_message(planned: Path, hook: Hook) -> None:
    state_path = project_dir(planned) / "state.json"
    state_path.write_text('{"status": "running", "goal": ')
    out = hook("Stop", payload("Stop", planned)).json
    assert out.get("decision") != "block" and "hookSpecificOutput" not in out
    assert set(out) <= {"systemMessage"}, out  # told, never blocked
    assert "moved aside" in out["systemMessage"]
    assert not state_path.exists()
    aside = list(project_dir(planned).glob("state.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == '{"status": "running", "goal": '
    # A damaged state drives nothing, but the rails stay until the user's stop.
    assert active_marker(planned).exists()
    assert "rails stay on until you run autopilot-codex stop" in out["systemMessage"]
    # `status` says what is kept on, why, and how to end it (issue 36: "no loop in this
    # worktree" while the rails still denied pushes).
    shown = status(cwd=planned, as_json=False)
    assert "no loop in this worktree" not in shown
    assert f"moved aside to {aside[0].name}" in shown and "pushes" in shown
    assert "End them with autopilot-codex stop" in shown
    stop(cwd=planned, reason="user")
    assert status(cwd=planned, as_json=False).startswith(
        "autopilot-codex: no loop in this worktree"
    )


def test_state_with_a_wrong_field_type_is_quarantined(planned: Path, hook: Hook) -> None:
    state_path = project_dir(planned) / "state.json"
    data = json.loads(state_path.read_text())
    data["iteration"] = "many"
    state_path.write_text(json.dumps(data))
    out = hook("PostToolUse", edit_payload(planned)).json
    assert "iteration" in out["systemMessage"]


def test_lock_timeout_answers_without_blocking(
    planned: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_LOCK_TIMEOUT_S", "0.2")
    store = Store(planned)
    with store.locked():
        out = hook("Stop", payload("Stop", planned)).json
    assert "decision" not in out
    assert "lock" in out["systemMessage"]


def test_launcher_runs_the_bridge_for_a_running_loop(planned: Path, manager: FakeOpenAI) -> None:
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    result = run_launcher(
        ["hook", "Stop", "--host", "claude"], json.dumps(payload("Stop", planned)).encode()
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["decision"] == "block"


def test_a_broken_config_keeps_the_rails_on_and_says_so(
    planned: Path, hook: Hook, isolated: Path
) -> None:
    (isolated / "config.json").write_text("{broken")
    data = payload(
        "PreToolUse", planned, tool_name="Bash", tool_input={"command": "git reset --hard"}
    )
    out = hook("PreToolUse", data).json
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "config.json is not valid JSON" in out["systemMessage"]


def test_precompact_then_stop_is_allowed_without_a_manager_call(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    assert hook("PreCompact", payload("PreCompact", planned, trigger="auto")).stdout == ""
    assert hook("Stop", payload("Stop", planned)).stdout == ""
    assert len(manager.requests) == 1
    assert state_of(planned)["status"] == "running"
    assert [e["event"] for e in events_of(planned)][-1] == "stop.after_compaction"


def test_a_review_failing_in_the_background_is_redone_at_the_stop(
    planned: Path, manager: FakeOpenAI, hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_TIMEOUT_S", "2")
    (planned / "file1.txt").write_text("x\n")
    manager.enqueue(*[Reply(status=401)] * 4, schema="Review")
    assert hook("PostToolUse", edit_payload(planned)).stdout == ""
    state = wait_reviews(planned)
    # Trouble off the critical path costs nothing but the call: the loop goes on.
    assert (state["status"], state["autopilot"]["last_review"]) == ("running", None)
    assert "review.unavailable.background" in [e["event"] for e in events_of(planned)]
    first = len(review_requests(manager))
    out = hook("Stop", payload("Stop", planned)).json
    assert len(review_requests(manager)) > first
    assert "decision" not in out
    assert "paused" in out["systemMessage"]
    assert state_of(planned)["status"] == "paused"


def test_the_plan_is_read_only_by_hooks_that_need_it(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    plan_file = project_dir(planned) / "plan.json"
    assert json.loads(plan_file.read_text())["tasks"][0]["id"] == "T1"
    assert "plan" not in state_of(planned)
    plan_file.write_text("{damaged")
    # Guards, activity counting and cached reviews never touch it ...
    assert hook("PostToolUse", payload("PostToolUse", planned, tool_name="Read")).stdout == ""
    assert state_of(planned)["tool_events"] == 1
    # ... a verdict does, and a damaged plan takes the loop off with a clear message.
    out = hook("Stop", payload("Stop", planned)).json
    assert "decision" not in out and "plan.json" in out["systemMessage"]
    assert len(manager.requests) == 1


def test_a_failed_tool_counts_as_work_and_is_never_reviewed(
    planned: Path, manager: FakeOpenAI, hook: Hook
) -> None:
    edit_state(planned, idle_stop_blocks=2)
    (planned / "file1.txt").write_text("x\n")
    failed = payload(
        "PostToolUseFailure",
        planned,
        tool_name="Bash",
        tool_input={"command": "pytest"},
        error="exit 1",
    )
    assert hook("PostToolUseFailure", failed).stdout == ""
    state = state_of(planned)
    assert (state["idle_stop_blocks"], state["tool_events"]) == (0, 1)
    assert manager.requests_for(schema="Review") == []


def commit_file(repo: Path, name: str) -> None:
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", f"feat: {name}")
