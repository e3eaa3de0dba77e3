"""The ralph loop end to end: the real Claude Code CLI (fake Anthropic API) runs
`/autopilot-codex:ralph-loop`, the Stop hook feeds the prompt back once, and the scripted model's
promise ends the loop. No manager is involved: nothing listens at the OpenAI address."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .autopilot_helpers import ROOT, Autopilot, hook_answers, stop_blocks
from .claude_cli import ClaudeRun
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
PROMPT = "Append a line to notes.txt."


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Iterator[Autopilot]:
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def run_ralph(claude: ClaudeRunner, ap: Autopilot, arguments: str) -> ClaudeRun:
    return claude(
        f"/autopilot-codex:ralph-loop {arguments}",
        ROOT,
        extra_env=ap.env(NO_MANAGER),
        timeout=90,
    )


def test_two_iterations_then_the_promise(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    write = ToolUse("Write", {"file_path": "{workdir}/notes.txt", "content": "one\n"})
    fake_anthropic.script = [
        [Text("First pass."), write],
        [Text("Wrote the first line; more to check.")],
        [Text("Checked again: it is all there.\n<promise>NOTES WRITTEN</promise>")],
    ]
    run = run_ralph(claude, ap, f'--max-iterations 5 --completion-promise "NOTES WRITTEN" {PROMPT}')
    assert run.ok, run.describe()
    mains = [r.raw for r in fake_anthropic.main_requests()]
    assert len(mains) == 3, fake_anthropic.dump_log()
    assert "ralph loop started: iteration 1/5" in mains[0]
    # The one block carried the banner and the prompt back to the model.
    (block,) = stop_blocks(run)
    assert block.startswith("[autopilot-codex] Ralph iteration 2/5")
    assert block.endswith(PROMPT)
    assert "Ralph iteration 2/5" in mains[2]
    finals = hook_answers(run, "Stop")
    assert len(finals) == 2 and "decision" not in finals[-1]
    assert "promise kept at iteration 2" in finals[-1].get("systemMessage", "")

    state = ap.state()
    assert (state["style"], state["status"], state["iteration"]) == ("ralph", "done", 2)
    assert state["session_id"] == run.session_id
    result: dict[str, Any] = json.loads((ap.project_dir / "last.json").read_text())
    assert (result["why"], result["iterations"]) == ("promise", 2)
    assert ap.active_markers() == []
    assert (ap.repo / "notes.txt").read_text() == "one\n"


def test_a_ralph_budget_is_spent_by_the_implementer_and_ends_the_loop(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    """Issue 22: no manager, no promise, no iteration cap; the implementer's own spend, read
    from Claude Code's transcript, ends the loop by its budget."""
    fake_anthropic.script = [[Text(f"Pass {n}.")] for n in range(1, 9)]
    # The fake model ("claude-test") is not in the table: priced at its dearest row, a turn of
    # about 14k input tokens costs about $0.21, so the second turn crosses $0.30.
    run = run_ralph(claude, ap, f"--max-iterations 0 --budget 0.30 {PROMPT}")
    assert run.ok, run.describe()
    state = ap.state()
    assert state["status"] == "stopped_budget", (state, fake_anthropic.dump_log())
    assert "implementer spend" in state["stop_reason"]
    assert state["budget_used_usd"] == 0.0 and state["implementer_used_usd"] >= 0.30
    assert state["implementer_unpriced"] == ["claude-test"]
    # Within one turn's cost of the cap: the Stop after the turn that crossed it ends the loop.
    assert len(fake_anthropic.main_requests()) == 2, fake_anthropic.dump_log()
    assert len(stop_blocks(run)) == 1


def test_a_subagents_spend_counts_toward_the_ralph_budget(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    """Claude Code writes a subagent's messages to a record of its own beside the session's
    transcript; the loop's meter counts them too, so its tokens are all the CLI reports."""
    agent = ToolUse(
        "Agent",
        {
            "description": "check notes",
            "prompt": "Say what notes.txt should hold.",
            "subagent_type": "general-purpose",
            "run_in_background": False,
        },
    )
    fake_anthropic.script = [[agent], [Text("It should hold one line.")], [Text("Done.")]]
    run = run_ralph(claude, ap, f"--max-iterations 1 --budget 100 {PROMPT}")
    assert run.ok, run.describe()
    state = ap.state()
    names = [Path(c["path"]).parent.name for c in state["spend_cursors"]]
    assert "subagents" in names, state["spend_cursors"]
    result = run.result
    assert result is not None
    reported = sum(
        m["inputTokens"]
        + m["outputTokens"]
        + m["cacheReadInputTokens"]
        + m["cacheCreationInputTokens"]
        for m in result["modelUsage"].values()
    )
    assert state["implementer_tokens"] == reported, fake_anthropic.dump_log()


EMPTY = ToolUse(
    "Bash", {"command": ': > "$HOME/.claude/projects/"*/"$CLAUDE_CODE_SESSION_ID.jsonl"'}
)


def reported_tokens(fake_anthropic: FakeAnthropic) -> list[int]:
    """The tokens of each message as the fake reported them (input: a quarter of the request's
    characters; output: five and a quarter of each block's)."""
    return [
        max(1, len(r.raw) // 4) + 5 + sum(len(json.dumps(b)) // 4 for b in r.response_blocks)
        for r in fake_anthropic.main_requests()
    ]


def test_the_rails_keep_the_implementer_from_emptying_its_transcript(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    """The attack through the real CLI: the implementer empties its own session transcript with
    a shell command, to hide what it spent. The spend-records rail denies it, so every message
    is counted, the one that issued the command too."""
    fake_anthropic.script = [[Text("Pass 1.")], [EMPTY], [Text("Pass 2.")], [Text("Pass 3.")]]
    run = run_ralph(claude, ap, f"--max-iterations 2 --budget 100 {PROMPT}")
    assert run.ok, run.describe()
    mains = fake_anthropic.main_requests()
    assert any("safety rail [spend-records]" in r.raw for r in mains), fake_anthropic.dump_log()
    assert [e for e in ap.events() if e["event"] == "spend.tampered"] == []
    tokens = reported_tokens(fake_anthropic)
    assert len(tokens) == 3, fake_anthropic.dump_log()
    state = ap.state()
    assert state["implementer_tokens"] == sum(tokens), (state["implementer_tokens"], tokens)


def test_a_transcript_the_implementer_empties_keeps_the_spend_counted(
    claude: ClaudeRunner, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    """The same attack where the user turned the rail off (`rails_allow`): the spend counted
    before stays counted, what Claude Code writes after it counts too, and the ledger says the
    record was tampered with. Known gap: the message that issued the command, written after the
    last look (the previous hook) and before the command ran, goes with the cut; only a look
    before each tool would keep it."""
    ap.home.mkdir(parents=True, exist_ok=True)
    (ap.home / "config.json").write_text(json.dumps({"rails_allow": ["spend-records"]}))
    fake_anthropic.script = [[Text("Pass 1.")], [EMPTY], [Text("Pass 2.")], [Text("Pass 3.")]]
    run = run_ralph(claude, ap, f"--max-iterations 2 --budget 100 {PROMPT}")
    assert run.ok, run.describe()
    tampered = [e for e in ap.events() if e["event"] == "spend.tampered"]
    assert [e["why"].split(" (")[0] for e in tampered] == ["cut short"], ap.event_names()
    tokens = reported_tokens(fake_anthropic)
    assert len(tokens) == 3, fake_anthropic.dump_log()
    state = ap.state()
    # Before the cut (the first message) and after it (the third): counted, never less.
    assert state["implementer_tokens"] >= tokens[0] + tokens[2], (
        state["implementer_tokens"],
        tokens,
    )
    assert state["spend_cursors"][0]["tampered"].startswith("cut short")
