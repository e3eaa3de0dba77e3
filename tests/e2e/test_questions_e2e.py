"""The implementer's `AskUserQuestion` answered by the manager, end to end on the real Claude
Code CLI: the PreToolUse hook gets the question, the manager's answer reaches the model's next
request in the same turn, and the ledger holds the exchange and its cost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import ROOT, Autopilot
from .claude_cli import git
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

ANSWER = "Take SQLite: the task contract asks for queries."
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


def test_the_manager_answers_the_implementers_question_in_the_turn(
    claude: ClaudeRunner,
    git_repo: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    openai_fake.enqueue(review_body("approve"), schema="Review")
    openai_fake.enqueue(
        {"answer": ANSWER, "confidence": "high", "plan_change": None}, schema="Consultation"
    )
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")

    def commit_after_the_answer(body: dict[str, Any]) -> list[Any]:
        assert ANSWER in json.dumps(body), "the answer did not reach the model"
        return [ToolUse("Bash", {"command": 'git add file1.txt && git commit -q -m "feat: t1"'})]

    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/file1.txt", "content": "one\n"})],
        [ToolUse("AskUserQuestion", QUESTION)],
        commit_after_the_answer,
        [Text("T1 is committed.")],
    ]
    # The tool exists only when the CLI runs as the Agent SDK runs it: stream-json input and
    # the permission prompt on stdio (plain `-p` disables it, and no hook fires).
    message = {
        "type": "user",
        "message": {"role": "user", "content": "/autopilot-codex:codex-plan write file1.txt"},
    }
    run = claude(
        "",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=90,
        extra_args=["--input-format", "stream-json", "--permission-prompt-tool", "stdio"],
        stdin=(json.dumps(message) + "\n").encode(),
    )
    assert run.ok, run.describe()
    assert run.wall_time < 90, run.wall_time  # never the host's hook timeout
    assert fake_anthropic.errors == [], fake_anthropic.dump_log()
    consulted = openai_fake.requests_for(schema="Consultation")
    assert len(consulted) == 1, [r.schema_name for r in openai_fake.requests]
    assert "Which storage should the cache use?" in consulted[0].prompt_text
    (record,) = [e for e in ap.events() if e["event"] == "question.answered"]
    assert record["answer"] == ANSWER and record["cost_usd"] > 0
    # The answer came back as the question tool's result, in the same turn.
    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert ANSWER in mains[2] and ANSWER not in mains[1]
    assert git(git_repo, "log", "-1", "--format=%s").strip() == "feat: t1"


def test_a_session_cut_short_before_its_stop_is_recorded_by_session_end(
    claude: ClaudeRunner,
    git_repo: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    """`--max-turns` ends a `-p` run before its Stop hook: the loop still says running, and
    the plugin's SessionEnd hook records that its session is gone."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    assert ap.cli("plan", "write", "file1.txt", openai_url=openai_fake.base_url).returncode == 0
    fake_anthropic.script = [[ToolUse("Bash", {"command": "ls"})], [Text("more")]]

    run = claude(
        "carry on with the plan",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=90,
        extra_args=["--max-turns", "1"],
    )

    assert run.wall_time < 90, run.wall_time  # never the host's hook timeout
    state = ap.state()
    assert state["status"] == "running"
    ended = [e for e in ap.events() if e["event"] == "session.ended"]
    assert [(e["session"], e["reason"]) for e in ended] == [(state["session_id"], "other")]
    assert not [e for e in ap.events() if e["event"].startswith("verdict.")]


def test_a_question_the_manager_leaves_to_the_user_goes_to_the_host_and_pauses_the_loop(
    claude: ClaudeRunner,
    git_repo: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    """`ASK_THE_USER`: the hook lets the tool through, so the CLI asks its own client (here a
    client that has closed its input, which the CLI reads as a refusal), and the loop pauses
    with the question in `status`."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    assert ap.cli("plan", "write", "file1.txt", openai_url=openai_fake.base_url).returncode == 0
    openai_fake.enqueue(
        {"answer": "ASK_THE_USER: a matter of taste", "confidence": "high", "plan_change": None},
        schema="Consultation",
    )
    fake_anthropic.script = [[ToolUse("AskUserQuestion", QUESTION)], [Text("I will wait.")]]
    message = {"type": "user", "message": {"role": "user", "content": "carry on"}}

    run = claude(
        "",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=90,
        extra_args=["--input-format", "stream-json", "--permission-prompt-tool", "stdio"],
        stdin=(json.dumps(message) + "\n").encode(),
    )

    assert run.ok, run.describe()
    assert run.wall_time < 90, run.wall_time  # never the host's hook timeout
    assert len(openai_fake.requests_for(schema="Consultation")) == 1
    # The CLI put the question to its client: the hook did not answer it.
    assert run.result is not None
    (denied,) = run.result["permission_denials"]
    assert denied["tool_name"] == "AskUserQuestion"
    assert "hook error" not in fake_anthropic.main_requests()[1].raw
    state = ap.state()
    assert state["status"] == "paused"
    assert "Which storage should the cache use?" in state["stop_reason"]
    (record,) = [e for e in ap.events() if e["event"] == "question.to_user"]
    assert record["reason"] == "a matter of taste" and record["cost_usd"] > 0
    status = ap.cli("status", openai_url=openai_fake.base_url).stdout
    assert "Question for you: Q: Which storage should the cache use?" in status
