"""Codex's `request_user_input` answered by the manager, end to end on the real Codex CLI:
its PreToolUse hook gets the questions, the manager's answer is the tool output the model
reads in the same turn, and the ledger and `status` hold the exchange and its cost. Without
a loop the tool is Codex's own (in `codex exec`, its refusal) and no manager is asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex.commands import install
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import Autopilot
from .claude_cli import git
from .codex_fixtures import CodexRunner
from .fake_codex_model import Call, FakeCodexModel, Patch, Say, Shell

pytestmark = pytest.mark.e2e

ANSWER = "Take SQLite: the task contract asks for queries."
QUESTION = {
    "questions": [
        {
            "id": "storage",
            "header": "Storage",
            "question": "Which storage should the cache use?",
            "options": [
                {"label": "SQLite", "description": "one file, queries"},
                {"label": "JSON files", "description": "no dependency"},
            ],
        }
    ]
}
ASK = Call("request_user_input", QUESTION, call_id="call_ask_1")
WRITE = Patch("*** Begin Patch\n*** Add File: file1.txt\n+one\n*** End Patch\n")


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def test_the_manager_answers_codexs_question_in_the_turn(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, openai_fake: FakeOpenAI
) -> None:
    openai_fake.enqueue(plan_body(1), schema="Plan")
    assert ap.cli("plan", "write", "file1.txt", openai_url=openai_fake.base_url).returncode == 0
    openai_fake.enqueue(*[review_body("approve")] * 2, schema="Review")
    openai_fake.enqueue(
        {"answer": ANSWER, "confidence": "high", "plan_change": None}, schema="Consultation"
    )
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fake_codex.script = [
        [Say("Writing."), WRITE],
        [ASK],
        [Shell('git add file1.txt && git commit -q -m "feat: t1"')],
        "T1 is committed.",
    ]

    run = codex(
        "carry on with the autopilot plan",
        extra_env=ap.env(openai_fake.base_url),
        forward_ports=[openai_fake.port],
        timeout=90,
    )

    assert run.ok, run.describe()
    assert run.wall_time < 90, run.wall_time  # never the host's hook timeout
    consulted = openai_fake.requests_for(schema="Consultation")
    assert len(consulted) == 1, [r.schema_name for r in openai_fake.requests]
    assert "Which storage should the cache use?" in consulted[0].prompt_text
    assert "SQLite: one file, queries" in consulted[0].prompt_text
    asked_at = next(
        i for i, r in enumerate(fake_codex.model_requests) if r.outputs_for("call_ask_1")
    )
    (output,) = fake_codex.model_requests[asked_at].outputs_for("call_ask_1")
    assert ANSWER in output
    assert all(ANSWER not in r.raw for r in fake_codex.model_requests[:asked_at])
    (record,) = [e for e in ap.events() if e["event"] == "question.answered"]
    assert record["answer"] == ANSWER and record["cost_usd"] > 0
    status = ap.cli("status", openai_url=openai_fake.base_url)
    assert "Which storage should the cache use?" in status.stdout and ANSWER in status.stdout
    assert git(ap.repo, "log", "-1", "--format=%s").strip() == "feat: t1"
    assert ap.state()["status"] == "done"


def test_without_a_loop_codexs_question_tool_is_its_own(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, openai_fake: FakeOpenAI
) -> None:
    fake_codex.script = [[ASK], "ok"]

    run = codex(
        "pick a storage",
        extra_env=ap.env(openai_fake.base_url),
        forward_ports=[openai_fake.port],
        timeout=90,
    )

    assert run.ok, run.describe()
    assert openai_fake.requests == []
    (output,) = fake_codex.model_requests[1].outputs_for("call_ask_1")
    assert output == "request_user_input is unavailable in Default mode"
