"""A ralph loop with the real Codex CLI as the host: started from the terminal with
`autopilot-codex ralph --host codex`, claimed by the first prompt of the Codex session, the
prompt fed back once at a Stop, and the scripted model's promise ends it. Hooks installed by
``install codex --user`` (trusted, no bypass flag); no manager is involved."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands import install

from .autopilot_helpers import Autopilot
from .codex_fixtures import CodexRunner
from .fake_codex_model import (
    Call,
    FakeCodexModel,
    Hold,
    Patch,
    Say,
    Shell,
    Turn,
    realistic_usage,
)

pytestmark = pytest.mark.e2e

NO_MANAGER = "http://127.0.0.1:9/v1"
PROMPT = "Append a line to notes.txt."
PROMISE = "NOTES WRITTEN"


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def test_two_iterations_then_the_promise(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    started = ap.cli(
        "ralph",
        "--host",
        "codex",
        "--max-iterations",
        "5",
        "--completion-promise",
        PROMISE,
        PROMPT,
        openai_url=NO_MANAGER,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    assert (
        ap.state()["session_id"] is None
    )  # from a terminal: unclaimed until a typed prompt claims it
    write = Patch("*** Begin Patch\n*** Add File: notes.txt\n+one\n*** End Patch\n")
    fake_codex.script = [
        [Say("First pass."), write],
        "Wrote the first line; more to check.",
        f"Checked again: it is all there.\n<promise>{PROMISE}</promise>",
    ]

    run = codex(PROMPT, extra_env=ap.env(NO_MANAGER), timeout=90)

    assert run.ok, run.describe()
    requests = [r.raw for r in fake_codex.model_requests]
    assert len(requests) == 3, requests
    # The one Stop block carried the banner and the prompt back, inside the same turn.
    assert "Ralph iteration 2/5" not in requests[1]
    assert "Ralph iteration 2/5" in requests[2] and PROMPT in requests[2]
    assert run.last_message is not None
    assert run.last_message.endswith(f"<promise>{PROMISE}</promise>")
    state = ap.state()
    assert (state["style"], state["status"], state["iteration"]) == ("ralph", "done", 2)
    assert state["session_id"] == run.thread_id
    result: dict[str, Any] = json.loads((ap.project_dir / "last.json").read_text())
    assert (result["why"], result["iterations"]) == ("promise", 2)
    assert ap.active_markers() == []
    assert (ap.repo / "notes.txt").read_text() == "one\n"


def test_a_ralph_budget_is_spent_by_codex_and_ends_the_loop(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    """Issue 22 through the real Codex CLI: no manager, no promise, no iteration cap; what
    Codex records of its own usage in its session rollout ends the loop by its budget, at the
    Stop after the response that crossed it."""
    budget = 0.30
    started = ap.cli(
        "ralph",
        "--host",
        "codex",
        "--max-iterations",
        "0",
        "--budget",
        str(budget),
        PROMPT,
        openai_url=NO_MANAGER,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    fake_codex.usage = realistic_usage
    # Each turn runs a command (a turn without one is a stall) and reports: two responses.
    fake_codex.script = [
        part for n in range(1, 12) for part in (Shell(f"echo pass {n}"), f"Pass {n}.")
    ]

    run = codex(PROMPT, extra_env=ap.env(NO_MANAGER), timeout=120)

    assert run.ok, run.describe()
    state = ap.state()
    assert state["status"] == "stopped_budget", state
    assert "implementer spend" in state["stop_reason"]
    assert state["budget_used_usd"] == 0.0
    assert state["implementer_unpriced"] == []  # gpt-5.5 is in the table
    # Each response priced as the fake reported it, at gpt-5.5's $5 in, $0.50 cached, $30 out
    # per million tokens (reasoning is part of the output count).
    costs = [
        (
            (u["input_tokens"] - u["input_tokens_details"]["cached_tokens"]) * 5.0
            + u["input_tokens_details"]["cached_tokens"] * 0.5
            + u["output_tokens"] * 30.0
        )
        / 1_000_000
        for u in (r.usage for r in fake_codex.model_requests)
    ]
    assert state["implementer_used_usd"] == pytest.approx(sum(costs))
    assert state["implementer_tokens"] == sum(
        r.usage["input_tokens"] + r.usage["output_tokens"] for r in fake_codex.model_requests
    )
    # Within one turn's cost of the cap: the turns before the last stayed under it.
    assert len(costs) % 2 == 0 and len(costs) >= 4, costs
    assert sum(costs[:-2]) < budget <= sum(costs), costs


def test_a_codex_subagents_spend_counts_toward_the_ralph_budget(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, codex_home: Path
) -> None:
    """A Codex subagent (multi-agent `spawn_agent`) writes a rollout of its own, naming its
    parent; its spend counts in the loop's meter with the parent's."""
    started = ap.cli(
        "ralph",
        "--host",
        "codex",
        "--max-iterations",
        "1",
        "--budget",
        "100",
        PROMPT,
        openai_url=NO_MANAGER,
    )
    assert started.returncode == 0, started.stdout + started.stderr
    spawn = Call(
        "spawn_agent", {"task_name": "helper", "message": "Say CHILD."}, namespace="collaboration"
    )
    # The parent's reply to the spawn waits until the child's usage is on disk, so the parent's
    # Stop comes after it whatever order Codex runs the two threads in.
    parent_done = Hold("Parent done.")
    threads: list[str] = []

    def chooser(raw: str, headers: dict[str, str]) -> Turn | None:
        thread = headers.get("thread-id", "")
        if thread not in threads:
            threads.append(thread)
        if thread != threads[0]:
            return "CHILD."
        return spawn if '"function_call_output"' not in raw else parent_done

    def release() -> None:
        while not parent_done.release.is_set():
            if any(
                '"parent_thread_id":"' in r.read_text().split("\n", 1)[0]
                and '"token_count"' in r.read_text()
                for r in codex_home.rglob("rollout-*.jsonl")
            ):
                parent_done.release.set()
            parent_done.release.wait(0.1)

    fake_codex.chooser = chooser
    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    run = codex(PROMPT, extra_env=ap.env(NO_MANAGER), extra_args=["--enable", "multi_agent_v2"])
    parent_done.release.set()
    assert run.ok, run.describe()
    assert len(threads) == 2 and len(fake_codex.model_requests) == 3
    state = ap.state()
    assert len(state["spend_cursors"]) == 2, state["spend_cursors"]
    # The fake reports 100 input and 10 output tokens a response: three responses, two threads.
    assert state["implementer_tokens"] == 3 * 110
