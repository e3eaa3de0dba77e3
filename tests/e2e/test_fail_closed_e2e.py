"""Fail closed on the bridge's own errors (issue 33), through the real Claude Code CLI (in its
sandbox) and the real Codex CLI: in a walled loop whose Stop the bridge cannot judge (git
refuses a corrupt state field), each Stop is blocked with the error named, three times, then
the loop pauses and the session ends: never an allow, never a session held forever."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.hosts.claude.boundary import boundary_settings
from autopilot_codex.wall import WallSpec, check_wall_prereqs
from tests.conftest import edit_state, plan_body
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import ROOT, Autopilot, hook_answers
from .codex_fixtures import CodexRunner
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text
from .fake_codex_model import FakeCodexModel
from .test_codex_autopilot import ap as ap  # noqa: F401 (fixture: install codex, a state home)
from .test_codex_autopilot import loop_run as codex_loop_run
from .test_codex_autopilot import plan as codex_plan
from .test_codex_autopilot import raws

pytestmark = pytest.mark.e2e


def test_a_walled_loops_stop_that_cannot_be_judged_blocks_then_pauses(
    claude: ClaudeRunner,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
    git_repo: Path,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prereqs = check_wall_prereqs()
    if not prereqs.ok:
        pytest.skip(f"the wall needs {', '.join(prereqs.missing)} (fix: {prereqs.fix})")
    loop = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    planned = loop.cli("plan", "write", "file1.txt", openai_url=openai_fake.base_url)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(loop.home))
    edit_state(git_repo, wall="on", base_sha="-x")
    spec = WallSpec(worktree=git_repo, state_home=loop.home, home=home)
    fake_anthropic.script = [[Text(f"Done, take {n}.")] for n in range(1, 5)]
    run = claude(
        "write file1.txt",
        ROOT,
        extra_env=loop.env(openai_fake.base_url),
        extra_args=["--settings", json.dumps(boundary_settings(spec))],
    )
    assert run.ok, run.describe()
    stops = hook_answers(run, "Stop")
    assert [a.get("decision") for a in stops] == ["block", "block", "block", None], stops
    for n, answer in enumerate(stops[:3], 1):
        reason = answer["reason"]
        assert reason.startswith(f"autopilot-codex: git log failed in {git_repo}: "), reason
        assert reason.endswith(
            f". This Stop is blocked ({n} of 3): the loop is guarded and its supervisor could "
            "not judge the turn; end the turn again."
        )
    assert (
        "The loop is paused: 3 Stops in a row the supervisor could not judge"
        in (stops[3]["systemMessage"])
    )
    for response in run.hook_responses("Stop"):
        assert response.get("exit_code") == 0, response
    state = loop.state()
    assert (state["status"], state["stop_reason"]) == (
        "paused",
        "3 Stops in a row the supervisor could not judge",
    )


def test_on_codex_which_has_no_block_cap_the_loop_pauses_after_three(
    codex: CodexRunner,
    ap: Autopilot,
    fake_codex: FakeCodexModel,
    openai_fake: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Codex obeys every Stop block (no cap of its own): the bridge's count is what ends it."""
    codex_plan(ap, openai_fake)
    monkeypatch.setenv("AUTOPILOT_CODEX_HOME", str(ap.home))
    edit_state(ap.repo, wall="on", base_sha="-x")
    fake_codex.script = [f"Done, take {n}." for n in range(1, 10)]

    codex_loop_run(codex, ap, openai_fake.base_url, [openai_fake.port])

    requests = raws(fake_codex)
    assert len(requests) == 1 + 3, len(requests)
    for n in (1, 2, 3):
        assert f"This Stop is blocked ({n} of 3)" in requests[n]
        assert "git log failed in " in requests[n]
    state = ap.state()
    assert (state["status"], state["stop_reason"]) == (
        "paused",
        "3 Stops in a row the supervisor could not judge",
    )
