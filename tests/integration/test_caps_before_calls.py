"""Every cap is checked before every paid manager call (issue 22), not only at the Stop: a loop
whose time or tokens ran out starts no review, verdict, `ask` or question answer; it stops with
the meter's typed status at its next decision. The clock is the only thing replaced."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from autopilot_codex import meters
from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from autopilot_codex.styles.autopilot import inflight
from tests.conftest import (
    Hook,
    edit_payload,
    git,
    payload,
    plan_body,
    review_body,
    state_of,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.test_budget_meters import spend
from tests.integration.test_questions import QUESTION

Capsys = pytest.CaptureFixture[str]


def cli(capsys: Capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def plan(capsys: Capsys, repo: Path, manager: FakeOpenAI, *extra: str) -> float:
    """Start an autopilot loop; its start time."""
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", *extra, "goal")
    assert code == 0, out
    return float(state_of(repo)["started_epoch"])


def events(repo: Path) -> list[str]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [json.loads(line)["event"] for line in lines]


def test_time_that_runs_out_during_the_review_starts_no_verdict_call(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, mocker: MockerFixture
) -> None:
    started = plan(capsys, repo, manager, "--max-duration", "20s")
    (repo / "file1.txt").write_text("one\n")
    manager.enqueue(review_body("approve"), schema="Review")
    manager.enqueue(verdict_body("continue"), schema="Verdict")
    # 5 s into the loop until the Stop's one call (review and verdict folded) has been made;
    # 30 s after it came back: its "continue" starts no further turn and no further call.
    planned = len(manager.requests)

    def clock() -> float:
        return started + (30 if len(manager.requests) > planned else 5)

    mocker.patch.object(inflight, "clock", side_effect=clock)
    answer = hook("Stop", payload("Stop", repo)).json
    assert len(manager.requests_for(schema="Judgement")) == 1
    assert manager.requests_for(schema="Review") == []
    assert manager.requests_for(schema="Verdict") == []
    assert answer.get("decision") != "block"
    state = state_of(repo)
    assert state["status"] == "stopped_duration"
    assert state["stop_reason"] == "time limit reached: 30s of 20s (10s over)"
    assert "verdict.duration" in events(repo)
    assert "Spent: manager $" in answer["systemMessage"]
    mocker.patch.object(meters, "clock", return_value=started + 30)
    code, out = cli(capsys, "-C", str(repo), "status")
    assert "Next: resume with autopilot-codex resume --max-duration 1h," in out, out


def test_ask_after_the_time_cap_is_refused_and_the_next_stop_ends_the_loop(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, mocker: MockerFixture
) -> None:
    started = plan(capsys, repo, manager, "--max-duration", "20s")
    mocker.patch.object(inflight, "clock", return_value=started + 25)
    calls = len(manager.requests)
    code, out = cli(capsys, "-C", str(repo), "ask", "which storage?")
    assert code == 1
    assert "not asked: time limit reached: 25s of 20s (5s over)" in out
    assert state_of(repo)["status"] == "running"  # an ask never ends the loop itself
    hook("Stop", payload("Stop", repo))
    assert state_of(repo)["status"] == "stopped_duration"
    assert len(manager.requests) == calls


def test_a_question_after_the_token_cap_is_not_answered_by_the_manager(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    plan(capsys, repo, manager, "--max-tokens", "1000")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 1500)
    tool = payload("PostToolUse", repo, transcript_path=str(transcript), tool_name="Bash")
    # The tool call that takes the tokens past the cap ends the loop and the turn there (a
    # turn that never ends would go on past any cap checked only at its Stop).
    ended = hook("PostToolUse", {**tool, "tool_input": {"command": "ls"}}).json
    assert ended["continue"] is False
    assert "token limit reached: 1500 of 1000 tokens (500 over)" in ended["stopReason"]
    assert state_of(repo)["status"] == "stopped_tokens"
    asked = payload(
        "PreToolUse", repo, tool_name="AskUserQuestion", tool_input=QUESTION, tool_use_id="q1"
    )
    answer = hook("PreToolUse", asked).json
    assert answer.get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    assert manager.requests_for(schema="Consultation") == []
    hook("Stop", payload("Stop", repo, transcript_path=str(transcript)))
    assert state_of(repo)["status"] == "stopped_tokens"
    assert manager.requests_for(schema="Review") == []


def test_an_edit_past_the_token_cap_starts_no_background_review(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    plan(capsys, repo, manager, "--max-tokens", "1000")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 1500)
    (repo / "file1.txt").write_text("x")
    edit = edit_payload(repo)
    edit["transcript_path"] = str(transcript)
    # The edit's hook ends the loop at the cap, the meter named, before any review starts.
    ended = hook("PostToolUse", edit).json
    assert ended["continue"] is False
    assert "token limit reached: 1500 of 1000 tokens (500 over)" in ended["stopReason"]
    assert state_of(repo)["status"] == "stopped_tokens"
    assert "review.started" not in events(repo)
    assert manager.requests_for(schema="Review") == []


def test_a_background_review_that_would_pass_the_budget_is_deferred_as_budget(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, tmp_path: Path
) -> None:
    plan(capsys, repo, manager, "--budget", "1")
    transcript = tmp_path / "session.jsonl"
    spend(transcript, "m1", 65_000)  # $0.975 of Sonnet output: under the cap, near it
    (repo / "file1.txt").write_text("x")
    edit = edit_payload(repo)
    edit["transcript_path"] = str(transcript)
    hook("PostToolUse", edit)
    deadline = time.monotonic() + 60
    while "review.deferred" not in events(repo):
        assert time.monotonic() < deadline, events(repo)
        time.sleep(0.05)
    assert manager.requests_for(schema="Review") == []
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    deferred = [r for r in map(json.loads, lines) if r["event"] == "review.deferred"]
    assert [r["reason"] for r in deferred] == ["budget"]
    assert "left beside the calls in flight; the review may cost $" in deferred[0]["why"]


# -- a 20 s cap over turns of 5 s: the loop ends within two turns of the cap -----------------


def test_a_20s_cap_ends_an_autopilot_loop_of_5s_turns_at_the_cap(
    repo: Path, manager: FakeOpenAI, capsys: Capsys, hook: Hook, mocker: MockerFixture
) -> None:
    started = plan(capsys, repo, manager, "--max-duration", "20s", "--review", "off")
    clock = mocker.patch.object(inflight, "clock", return_value=started)
    ended_at = 0
    for turn in range(1, 7):
        (repo / f"turn{turn}.txt").write_text(f"{turn}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"turn {turn}")
        clock.return_value = started + 5 * turn
        manager.enqueue(verdict_body("continue"), schema="Verdict")
        hook("Stop", payload("Stop", repo, stop_hook_active=turn > 1))
        if state_of(repo)["status"] != "running":
            ended_at = turn
            break
    assert ended_at == 4  # 20 s: the cap's own turn, well within two turns of it
    assert state_of(repo)["status"] == "stopped_duration"
    assert len(manager.requests_for(schema="Verdict")) == 3


def test_a_20s_cap_ends_a_ralph_loop_of_5s_turns_at_the_cap(
    repo: Path, capsys: Capsys, hook: Hook, mocker: MockerFixture, tmp_path: Path
) -> None:
    start = 1_800_000_000.0
    clock = mocker.patch.object(meters, "clock", return_value=start)
    code, out = cli(
        capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "--max-duration", "20s", "go"
    )
    assert code == 0, out
    ended_at, answer = 0, {}
    for turn in range(1, 7):
        clock.return_value = start + 5 * turn
        answer = hook("Stop", payload("Stop", repo, stop_hook_active=turn > 1)).json
        if answer.get("decision") != "block":
            ended_at = turn
            break
        assert answer["systemMessage"].startswith(f"Ralph iteration {turn + 1}/50 · $0.00 spent")
    assert ended_at == 4
    assert state_of(repo)["status"] == "stopped_duration"
    assert "time limit reached: 20s of 20s (0s over)" in answer["systemMessage"]


# -- the projected end -------------------------------------------------------------------------


def test_status_projects_how_many_more_iterations_each_cap_lasts(
    repo: Path, capsys: Capsys, hook: Hook, mocker: MockerFixture, tmp_path: Path
) -> None:
    # Now, as the transcript's records are stamped (the reader counts none from before).
    start = float(int(time.time()) - 1)
    clock = mocker.patch.object(meters, "clock", return_value=start)
    code, out = cli(
        capsys, "-C", str(repo), "ralph", "--session-id", "sess-1", "--max-iterations", "0",
        "--budget", "1", "--max-tokens", "100000", "--max-duration", "1h", "go",
    )  # fmt: skip
    assert code == 0, out
    transcript = tmp_path / "session.jsonl"
    for n in (1, 2):
        spend(transcript, f"m{n}", 10_000)  # $0.15 each
        clock.return_value = start + 5 * 60 * n
        stop = payload("Stop", repo, transcript_path=str(transcript), stop_hook_active=n > 1)
        assert hook("Stop", stop).json.get("decision") == "block"
    # Two iterations ended: $0.30, 20000 tokens and 10 minutes, so per iteration $0.15,
    # 10000 tokens and 5 minutes.
    code, out = cli(capsys, "-C", str(repo), "status")
    assert (
        "At this rate the budget lasts about 4 more iterations; the token cap about 8 more; "
        "the time cap about 10 more." in out
    ), out


def test_no_projection_before_an_iteration_has_ended(
    repo: Path, manager: FakeOpenAI, capsys: Capsys
) -> None:
    plan(capsys, repo, manager, "--budget", "3")
    code, out = cli(capsys, "-C", str(repo), "status")
    assert code == 0 and "At this rate" not in out
