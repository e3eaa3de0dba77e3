"""`autopilot-codex ask` end to end: the implementer, in the real Claude Code CLI, consults the
manager from its Bash tool mid-turn, reads the answer in the tool result and goes on working in
the same turn; the consultation is charged to the loop and is not an iteration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import unfolded_schemas

from .autopilot_helpers import ROOT, Autopilot, hook_answers, stop_blocks
from .claude_cli import git
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

ANSWER = "Yes: end file1.txt with a newline, as the README does."


def test_the_implementer_asks_mid_turn_and_goes_on(
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

    def commit_after_reading_the_answer(body: dict[str, Any]) -> list[Any]:
        assert ANSWER in json.dumps(body), "the answer did not reach the model"
        return [
            Text("The manager says yes; committing."),
            ToolUse("Bash", {"command": 'git add file1.txt && git commit -q -m "feat: task 1"'}),
        ]

    fake_anthropic.script = [
        [
            Text("Starting T1."),
            ToolUse("Write", {"file_path": "{workdir}/file1.txt", "content": "one\n"}),
        ],
        # The plugin's bin/ is on the Bash tool's PATH.
        [
            ToolUse(
                "Bash", {"command": 'autopilot-codex ask "Should file1.txt end with a newline?"'}
            )
        ],
        commit_after_reading_the_answer,
        [Text("T1 is committed.")],
    ]

    run = claude(
        "/autopilot-codex:codex-plan write file1.txt",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=90,
    )

    assert run.ok, run.describe()
    assert fake_anthropic.errors == [], fake_anthropic.dump_log()
    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert len(mains) == 4, fake_anthropic.dump_log()
    # The answer came back as the Bash tool's result, inside the turn ...
    assert ANSWER in mains[2] and "not an iteration" in mains[2]
    assert ANSWER not in mains[1]
    # ... and the turn went on: one Stop, at its very end, after the commit.
    assert len(hook_answers(run, "Stop")) == 1 and stop_blocks(run) == []
    assert git(git_repo, "log", "-1", "--format=%s").strip() == "feat: task 1"

    # The review runs in the background, so it may land before or after the consultation, or
    # not have started before the Stop, which then folds it into the verdict's call.
    names = cast("list[str]", unfolded_schemas(openai_fake))
    assert names[0] == "Plan" and names[-1] == "Verdict", names
    assert sorted(names[1:-1]) == ["Consultation", "Review"], names
    consulted = openai_fake.requests_for(schema="Consultation")[0].prompt_text
    assert "Should file1.txt end with a newline?" in consulted and "+one" in consulted
    state = ap.state()
    assert state["status"] == "done" and state["iteration"] == 1
    assert state["autopilot"]["consultations_total"] == 1
    (asked,) = [e for e in ap.events() if e["event"] == "ask"]
    assert asked["decision"] == "answered" and asked["cost_usd"] > 0
    # Claude Code hands its session id to the Bash tool, so the consultation is attributed.
    assert asked["session"] == run.session_id
    assert_events(ap.event_names())
    assert not (ap.home / "logs" / "bridge.log").exists()


def test_the_codex_manager_subagent_relays_the_answer(
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
        {"answer": ANSWER, "confidence": "medium", "plan_change": None}, schema="Consultation"
    )
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    question = "Should file1.txt end with a newline?"

    def subagent_runs_ask(body: dict[str, Any]) -> ToolUse:
        # The subagent's own instructions, from agents/codex-manager.md, reached its model.
        assert "You are a relay between the implementer" in json.dumps(body)
        command = f"autopilot-codex ask - <<'AUTOPILOT_CODEX_QUESTION'\n{question}\nAUTOPILOT_CODEX_QUESTION"
        return ToolUse("Bash", {"command": command})

    def subagent_relays(body: dict[str, Any]) -> Text:
        assert ANSWER in json.dumps(body), "the subagent's Bash did not get the answer"
        return Text(f"Manager's answer (confidence medium):\n{ANSWER}")

    def main_goes_on(body: dict[str, Any]) -> list[Any]:
        assert ANSWER in json.dumps(body), "the subagent's report did not reach the implementer"
        return [
            ToolUse("Bash", {"command": 'git add file1.txt && git commit -q -m "feat: task 1"'})
        ]

    fake_anthropic.script = [
        [ToolUse("Write", {"file_path": "{workdir}/file1.txt", "content": "one\n"})],
        [
            ToolUse(
                "Agent",
                {
                    "description": "ask the manager",
                    "prompt": question,
                    "subagent_type": "autopilot-codex:codex-manager",
                    "run_in_background": False,
                },
            )
        ],
        subagent_runs_ask,
        subagent_relays,
        main_goes_on,
        [Text("T1 is committed.")],
    ]

    run = claude(
        "/autopilot-codex:codex-plan write file1.txt",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=90,
    )

    assert run.ok, run.describe()
    assert fake_anthropic.errors == [], fake_anthropic.dump_log()
    assert fake_anthropic.turns_consumed == 6, fake_anthropic.dump_log()
    assert len(hook_answers(run, "Stop")) == 1 and stop_blocks(run) == []
    assert git(git_repo, "log", "-1", "--format=%s").strip() == "feat: task 1"
    assert question in openai_fake.requests_for(schema="Consultation")[0].prompt_text
    state = ap.state()
    assert state["status"] == "done" and state["iteration"] == 1
    assert state["autopilot"]["consultations_total"] == 1
    assert_events(ap.event_names())


def assert_events(names: list[str]) -> None:
    """One plan, one review, one consultation, one verdict: the consultation is neither an
    iteration nor a review, and the background review's bookkeeping may interleave."""
    paid = [n for n in names if n in ("plan", "review.approve", "ask", "verdict.done")]
    assert paid[0] == "plan" and paid[-1] == "verdict.done", names
    assert sorted(paid[1:-1]) == ["ask", "review.approve"], names
