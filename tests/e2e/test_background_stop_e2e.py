"""Issue 27, item 14, on the real Claude Code CLI: a Stop while a shell the implementer started
in the background still runs is not the end of the turn. The hook lets it through with a line
naming that work and asks the manager nothing; the Stop after the work wakes the session is
judged."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import plan_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import unfolded_schemas

from .autopilot_helpers import ROOT, Autopilot, hook_answers
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e


def test_a_stop_with_a_background_shell_running_waits_for_it_then_is_judged(
    claude: ClaudeRunner,
    git_repo: Path,
    tmp_path: Path,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    openai_fake.enqueue(plan_body(1), schema="Plan")
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    # The shell runs until the first Stop has been answered (the test then lets it end), so the
    # Stop always finds it running, however slow the machine.
    gate = tmp_path / "build-may-end"
    shell = f"until [ -e {gate} ]; do sleep 0.1; done; echo built"
    watcher = threading.Thread(target=_open_after_the_first_stop, args=(ap, gate), daemon=True)
    watcher.start()
    fake_anthropic.script = [
        [
            Text("Starting the build."),
            ToolUse("Bash", {"command": shell, "run_in_background": True}),
        ],
        [Text("Waiting for the build.")],
        [Text("The build is done.")],
    ]

    run = claude(
        "/autopilot-codex:codex-plan build it",
        ROOT,
        extra_env=ap.env(openai_fake.base_url),
        timeout=120,
    )

    assert run.ok, run.describe()
    assert fake_anthropic.errors == [], fake_anthropic.dump_log()
    first, last = hook_answers(run, "Stop")
    # The first Stop: let through with a word, no block, nothing asked of the manager.
    assert "decision" not in first
    assert "1 background task still running (until [ -e " in first["systemMessage"]
    assert "the manager judges the turn once it ends" in first["systemMessage"]
    # The shell's end woke the session; its next Stop was judged, once.
    assert len(fake_anthropic.main_requests()) == 3
    assert "done" in last["systemMessage"] and "decision" not in last
    assert unfolded_schemas(openai_fake) == ["Plan", "Verdict"]
    assert "The build is done." in openai_fake.requests_for(schema="Verdict")[0].prompt_text
    names = [e["event"] for e in ap.events()]
    assert names.index("stop.background") < names.index("verdict.done")
    state = ap.state()
    assert (state["status"], state["iteration"]) == ("done", 1)


def _open_after_the_first_stop(ap: Autopilot, gate: Path) -> None:
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            # (AssertionError: the loop's folder is not there yet; ValueError: a line half written)
            with contextlib.suppress(OSError, ValueError, AssertionError):
                if any(e["event"] == "stop.background" for e in ap.events()):
                    return
            time.sleep(0.05)
    finally:
        gate.touch()
