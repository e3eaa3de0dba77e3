"""The implementer's question tool answered by the manager while a loop runs: through the real
hook launcher (PreToolUse), the real `openai` client against the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.cli import main
from autopilot_codex.paths import project_dir
from tests.conftest import Hook, payload, plan_body, run_launcher
from tests.fakes.openai_server import FakeOpenAI

QUESTION = {
    "questions": [
        {
            "question": "Which storage should the cache use?",
            "header": "Storage",
            "multiSelect": False,
            "options": [
                {"label": "SQLite", "description": "one file, queries"},
                {"label": "JSON files", "description": "no dependency"},
            ],
        }
    ]
}


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def events(repo: Path) -> list[dict[str, Any]]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def state_of(repo: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project_dir(repo) / "state.json").read_text())
    return {**data.get("autopilot", {}), **data}


def start(repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    manager.enqueue(plan_body(2), schema="Plan")
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "sess-1", "build", "it")
    assert code == 0, out


def ask_tool(repo: Path, session: str = "sess-1", **env: str) -> dict[str, Any]:
    data = payload(
        "PreToolUse",
        repo,
        session,
        tool_name="AskUserQuestion",
        tool_input=QUESTION,
        tool_use_id="toolu_q",
    )
    run = run_launcher(
        ["hook", "PreToolUse", "--host", "claude"], json.dumps(data).encode(), repo, env
    )
    assert run.code == 0, run.stderr
    return run.json


def reply(answer: str) -> dict[str, Any]:
    return {"answer": answer, "confidence": "high", "plan_change": None}


def test_the_manager_answers_in_the_same_turn(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    before = state_of(repo)["budget_used_usd"]
    manager.enqueue(reply("Take SQLite: the contract asks for queries."), schema="Consultation")
    out = ask_tool(repo)
    hook = out["hookSpecificOutput"]
    assert hook["permissionDecision"] == "deny"
    assert "Take SQLite: the contract asks for queries." in hook["permissionDecisionReason"]
    (asked,) = manager.requests_for(schema="Consultation")
    prompt = asked.prompt_text
    assert "Which storage should the cache use?" in prompt and "SQLite: one file" in prompt
    assert "JSON files: no dependency" in prompt and "Task T1 (1/2)" in prompt
    (record,) = [e for e in events(repo) if e["event"] == "question.answered"]
    assert "Which storage" in record["question"] and record["answer"].startswith("Take SQLite")
    assert record["cost_usd"] > 0 and record["task"] == "T1"
    state = state_of(repo)
    assert state["status"] == "running" and state["budget_used_usd"] > before
    assert state["consultations"] == 1
    status = cli(capsys, "-C", str(repo), "status")[1]
    assert "Last question" in status and "Take SQLite" in status


def test_ask_the_user_lets_the_tool_run_and_pauses_the_loop(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    manager.enqueue(reply("ASK_THE_USER: a matter of taste"), schema="Consultation")
    out = ask_tool(repo)
    assert out.get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    state = state_of(repo)
    assert state["status"] == "paused"
    assert "Which storage should the cache use?" in state["stop_reason"]
    (record,) = [e for e in events(repo) if e["event"] == "question.to_user"]
    assert record["reason"] == "a matter of taste"
    assert "Question for you: Q: Which storage" in cli(capsys, "-C", str(repo), "status")[1]


def test_another_session_and_no_loop_never_reach_the_manager(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ask_tool(repo) == {}
    start(repo, manager, capsys)
    assert ask_tool(repo, session="someone-else") == {}
    assert manager.requests_for(schema="Consultation") == []
    assert not [e for e in events(repo) if e["event"].startswith("question.")]


def test_the_cap_per_task_leaves_the_question_to_the_user(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    out = ask_tool(repo, AUTOPILOT_CODEX_MAX_CONSULTATIONS="0")
    assert out.get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    assert "not asked" in json.dumps(out)
    assert manager.requests_for(schema="Consultation") == []
    assert state_of(repo)["status"] == "running"


def test_a_failing_manager_leaves_the_question_to_the_user_charged(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.fakes.openai_server import Reply

    start(repo, manager, capsys)
    manager.enqueue(
        *[Reply(status=500, body={"error": {"message": "boom"}})] * 6, schema="Consultation"
    )
    out = ask_tool(repo, AUTOPILOT_CODEX_TIMEOUT_S="5")
    assert out.get("hookSpecificOutput", {}).get("permissionDecision") != "deny"
    assert state_of(repo)["status"] == "running"
    assert [e["decision"] for e in events(repo) if e["event"] == "ask"] in (
        ["failed"],
        ["interrupted"],
    )


def test_the_manager_answering_for_the_user_sees_the_open_findings(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    from tests.conftest import review_body
    from tests.integration.test_convergence import committing_turns

    start(repo, manager, capsys)
    manager.enqueue(review_body("fix"), schema="Review")
    committing_turns(repo, hook, 1)
    manager.enqueue(reply("Fix F1 first: the content is wrong."), schema="Consultation")
    ask_tool(repo)
    (asked,) = manager.requests_for(schema="Consultation")
    assert "Open review findings (task T1):" in asked.prompt_text
    assert "F1" in asked.prompt_text and "wrong content" in asked.prompt_text


def test_a_question_tool_without_a_question_is_let_through_unasked(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    start(repo, manager, capsys)
    data = payload(
        "PreToolUse", repo, "sess-1", tool_name="AskUserQuestion", tool_input={"questions": []}
    )
    run = run_launcher(["hook", "PreToolUse", "--host", "claude"], json.dumps(data).encode(), repo)
    assert (run.code, run.stdout) == (0, "")
    assert manager.requests_for(schema="Consultation") == []
    assert state_of(repo)["consultations"] == 0
