"""Evidence before done, end to end: the real Claude Code CLI says "all tests pass" with a red
check; the Stop hook runs the user's check, overrules the manager's `done` and tells Claude what
failed; Claude fixes it, and only then does the loop end `done`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import ROOT, Autopilot, hook_answers, stop_blocks
from .claude_cli import git
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

CHECK = "grep -qx 2 total.txt || (echo test_total_is_right FAILED: total.txt is not 2; exit 1)"


def write(name: str, content: str) -> ToolUse:
    return ToolUse("Write", {"file_path": "{workdir}/" + name, "content": content})


def commit(name: str, subject: str) -> ToolUse:
    return ToolUse("Bash", {"command": f'git add {name} && git commit -q -m "{subject}"'})


def test_a_false_done_is_overruled_until_the_check_is_green(
    claude: ClaudeRunner,
    git_repo: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    # The manager believes the implementer both times: only the check tells them apart.
    openai_fake.enqueue(verdict_body("done"), verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [write("total.txt", "3\n")],
        [commit("total.txt", "add the total")],
        [Text("Done. All tests pass.")],
        [write("total.txt", "2\n")],
        [commit("total.txt", "fix the total")],
        [Text("Fixed the total; the check passes now.")],
    ]
    env = ap.env(openai_fake.base_url, {"AUTOPILOT_CODEX_REVIEW": "off"})

    prompt = f'/autopilot-codex:codex-plan --check "{CHECK}" write the total'
    run = claude(prompt, ROOT, extra_env=env, timeout=120)

    assert run.ok, run.describe()
    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert len(mains) == 6, fake_anthropic.dump_log()
    assert "Checks run by the bridge before it believes done" in mains[0]
    # The block reason reached the model's next request, with the failing test's name.
    (block,) = stop_blocks(run)
    assert "test_total_is_right FAILED" in block and "your checks say otherwise" in block
    # The check's own output (quoted under its status line), not its command text.
    output = "| test_total_is_right FAILED: total.txt is not 2"
    assert output in block
    assert all(output not in raw for raw in mains[:3])
    assert output in mains[3]
    finals = hook_answers(run, "Stop")
    assert "done" in finals[-1].get("systemMessage", "") and "decision" not in finals[-1]

    state = ap.state()
    assert state["status"] == "done"
    assert [c["status"] for c in state["last_checks"]] == ["pass"]
    names = ap.event_names()
    assert names.count("checks.run") == 2
    assert names.index("checks.overrule") < names.index("verdict.done")
    # The manager saw the red evidence the first time and the green the second.
    verdicts = openai_fake.requests_for(schema="Verdict")
    assert "FAILED" in verdicts[0].prompt_text and "passed" in verdicts[1].prompt_text
    assert (git_repo / "total.txt").read_text() == "2\n"
    assert git(git_repo, "status", "--porcelain").strip() == ""
