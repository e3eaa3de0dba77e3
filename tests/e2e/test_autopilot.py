"""The autopilot-codex plugin end to end: the real Claude Code CLI (fake Anthropic API) runs the
plugin's slash commands and hooks, and a fake OpenAI server plays the manager.

Every scenario checks four witnesses: the loop's ``state.json`` and ``events.jsonl``, the files
in the repository, what the fake Anthropic server was sent (block reasons must reach the model;
they are matched as substrings, never by message structure) and what the manager was asked.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.reviews import unfolded, unfolded_schemas

from .autopilot_helpers import (
    ROOT,
    TEST_KEY,
    Autopilot,
    hook_answers,
    hook_stdouts,
    stop_blocks,
)
from .claude_cli import ClaudeRun, build_env, git
from .conftest import ClaudeRunner
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e

PLAN = "/autopilot-codex:codex-plan"
STOP = "/autopilot-codex:codex-stop"
GOAL = "write file1.txt and file2.txt"
RUN_TIMEOUT = 90


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path) -> Iterator[Autopilot]:
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


@pytest.fixture
def loop_run(claude: ClaudeRunner, ap: Autopilot) -> Any:
    """``loop_run(prompt, openai_url, settings=None, **kw)``: a Claude run with the plugin
    loaded from this checkout and the autopilot environment set."""

    def runner(
        prompt: str,
        openai_url: str,
        settings: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> ClaudeRun:
        kwargs.setdefault("timeout", RUN_TIMEOUT)
        return claude(prompt, ROOT, extra_env=ap.env(openai_url, settings), **kwargs)

    return runner


# -- script pieces -----------------------------------------------------------------------------


def write(name: str, content: str) -> ToolUse:
    return ToolUse("Write", {"file_path": "{workdir}/" + name, "content": content})


def commit(name: str, subject: str) -> ToolUse:
    return ToolUse("Bash", {"command": f'git add {name} && git commit -q -m "{subject}"'})


def assert_ran(run: ClaudeRun) -> None:
    """The run finished normally, no tool was denied, and every hook exited 0 quietly."""
    assert run.ok, run.describe()
    assert run.result is not None and run.result["permission_denials"] == [], run.describe()
    for response in run.hook_responses():
        assert response.get("exit_code") == 0, json.dumps(response)
        assert not (response.get("stderr") or "").strip(), json.dumps(response)


def assert_clean_tree(repo: Path) -> None:
    assert git(repo, "status", "--porcelain").strip() == ""


def mains_raw(fake: FakeAnthropic) -> list[str]:
    return [r.raw for r in fake.main_requests()]


# The background review's bookkeeping: when a review started, was superseded by the Stop (a
# commit changes how a new file's diff reads) or was replayed from the cache.
BOOKKEEPING = frozenset({"review.started", "review.superseded", "review.cached"})


def decisions(ap: Autopilot) -> list[str]:
    return [name for name in ap.event_names() if name not in BOOKKEEPING]


def settled(ap: Autopilot, timeout: float = 30) -> dict[str, Any]:
    """The state once the background review a session left behind has finished."""
    deadline = time.monotonic() + timeout
    while (state := ap.state())["inflight"] is not None:
        assert time.monotonic() < deadline, state["inflight"]
        time.sleep(0.05)
    return state


def schemas(server: FakeOpenAI) -> list[str | None]:
    return [r.schema_name for r in server.requests]


# -- 1. happy path -----------------------------------------------------------------------------


def test_happy_path_two_tasks(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    openai_fake.enqueue(verdict_body("continue", done=True), verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [Text("Starting T1."), write("file1.txt", "one\n")],
        [commit("file1.txt", "feat(files): task number 1")],
        [Text("T1 is committed.")],
        [Text("On to T2."), write("file2.txt", "two\n")],
        [commit("file2.txt", "feat(files): task number 2")],
        [Text("T2 is committed.")],
    ]
    base = git(ap.repo, "rev-parse", "HEAD").strip()

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url)

    assert_ran(run)
    assert fake_anthropic.errors == []
    # The slash command planned before the first request, and Claude saw the contract.
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 6, fake_anthropic.dump_log()
    assert "autopilot-codex: loop started." in mains[0]
    assert "Task T1 (1/2): task number 1" in mains[0]
    # The continue verdict's block carried the next task's contract to Claude, and only then.
    assert all("Task T2 (2/2)" not in raw for raw in mains[:3])
    assert "Manager verdict: continue" in mains[3]
    assert "Task T1 accepted." in mains[3]
    assert "Task T2 (2/2): task number 2" in mains[3]
    (block,) = stop_blocks(run)
    assert "Task T2 (2/2)" in block
    finals = hook_answers(run, "Stop")
    assert len(finals) == 2
    assert "done" in finals[-1].get("systemMessage", "") and "decision" not in finals[-1]
    assert run.result is not None and run.result["result"] == "T2 is committed."

    # Repository: both files, one commit per task.
    assert (ap.repo / "file1.txt").read_text() == "one\n"
    assert (ap.repo / "file2.txt").read_text() == "two\n"
    subjects = git(ap.repo, "log", "--format=%s", f"{base}..HEAD").splitlines()
    assert subjects == ["feat(files): task number 2", "feat(files): task number 1"]

    # State and ledger.
    state = ap.state()
    assert state["status"] == "done"
    assert state["iteration"] == 2
    assert state["session_id"] == run.session_id
    assert state["autopilot"]["completed_tasks"] == ["T1", "T2"]
    assert state["autopilot"]["current_task"] is None
    assert state["base_sha"] == base
    assert state["autopilot"]["last_verdict"]["decision"] == "done"
    assert state["budget_used_usd"] > 0
    assert decisions(ap) == [
        "plan",
        "review.approve",
        "verdict.continue",
        "review.approve",
        "verdict.done",
    ]
    assert all(e.get("session") == run.session_id for e in ap.events())
    assert ap.active_markers() == []

    # The manager: one plan, a review per edit, a verdict per Stop, in that order (a Stop that
    # came before its edit's background review started folds the two into one call).
    assert unfolded_schemas(openai_fake) == ["Plan", "Review", "Verdict", "Review", "Verdict"]
    plan_req, review1, verdict1, review2, verdict2 = unfolded(openai_fake)
    assert GOAL in plan_req.prompt_text
    assert "file1.txt" in review1.prompt_text and "+one" in review1.prompt_text
    assert "feat(files): task number 1" in verdict1.prompt_text
    assert "T1 is committed." in verdict1.prompt_text
    assert "+two" in review2.prompt_text and "+one" not in review2.prompt_text
    assert "T2 is committed." in verdict2.prompt_text
    assert {r.headers.get("authorization") for r in openai_fake.requests} == {f"Bearer {TEST_KEY}"}


# -- 2. review fix, review reject ---------------------------------------------------------------


def test_review_reject_sends_the_revert_command(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    readme = (ap.repo / "README.md").read_text()
    base = git(ap.repo, "rev-parse", "HEAD").strip()
    openai_fake.enqueue(plan_body(1), schema="Plan")
    openai_fake.enqueue(review_body("reject", revert_files=["README.md"]), schema="Review")
    openai_fake.enqueue(verdict_body("abort"), schema="Verdict")
    revert = re.compile(r"git restore --source=[0-9a-f]{12} --staged --worktree -- README\.md")

    def run_the_revert(body: dict[str, Any]) -> list[Any]:
        found = revert.search(json.dumps(body))
        assert found is not None, "the reject reason did not reach the model"
        return [Text("Reverting as asked."), ToolUse("Bash", {"command": found.group(0)})]

    # The review comes back in the background while a command runs: the command waits for the
    # worker to have kept the reject, not for a time a loaded machine may not keep.
    kept = ap.repo.parent / "reject-kept"
    watcher = threading.Thread(target=_mark_when_kept, args=(ap, kept), daemon=True)
    watcher.start()
    wait = f"until [ -e {shlex.quote(str(kept))} ]; do sleep 0.1; done"
    fake_anthropic.script = [
        [ToolUse("Read", {"file_path": "{workdir}/README.md"})],
        [
            ToolUse(
                "Edit",
                {
                    "file_path": "{workdir}/README.md",
                    "old_string": "# e2e workdir",
                    "new_string": "# broken",
                },
            )
        ],
        [ToolUse("Bash", {"command": wait})],
        run_the_revert,
        [Text("Reverted; this approach does not work.")],
    ]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url)

    assert_ran(run)
    assert fake_anthropic.errors == []
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 5, fake_anthropic.dump_log()
    assert "Review: REJECTED" in mains[3]
    assert f"git restore --source={base[:12]} --staged --worktree -- README.md" in mains[3]
    assert "git restore" not in mains[2]
    posts = hook_answers(run, "PostToolUse")
    # Read, Edit (its review still out), Bash (hands the reject over), the revert.
    assert [p.get("decision") for p in posts] == [None, None, "block", None]

    # The revert the reviewer asked for worked: the file is back to the task's base.
    assert (ap.repo / "README.md").read_text() == readme
    assert git(ap.repo, "status", "--porcelain").strip() == ""

    state = ap.state()
    assert state["status"] == "aborted"
    assert state["autopilot"]["last_review"]["decision"] == "reject"
    # The revert threw the edit away: the shadow history kept it, and the ledger says so.
    assert decisions(ap) == [
        "plan", "review.reject", "review.reject.delivered", "work.lost", "verdict.abort"
    ]  # fmt: skip
    assert schemas(openai_fake) == ["Plan", "Review", "Verdict"]
    assert "+# broken" in openai_fake.requests_for(schema="Review")[0].prompt_text
    assert "# broken" not in openai_fake.requests_for(schema="Verdict")[0].prompt_text


def _mark_when_kept(ap: Autopilot, marker: Path) -> None:
    """Touch `marker` once the loop holds a review for its next hook to hand over."""
    state = project_dir(ap.repo, ap.home) / "state.json"
    deadline = time.monotonic() + 240  # past pytest's own timeout only if it never comes
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(state.read_text()).get("autopilot", {}).get("pending_review"):
                marker.touch()
                return
        time.sleep(0.05)


def test_a_late_fix_reaches_the_model_at_its_next_tool(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    openai_fake.enqueue(plan_body(1), schema="Plan")
    openai_fake.enqueue(Reply(body=review_body("fix"), delay=2.0), schema="Review")
    # The second review sees the edit; a third, the same change once committed (a new file's
    # diff reads differently once it is tracked).
    openai_fake.enqueue(review_body("approve"), review_body("approve"), schema="Review")
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fix = {"file_path": "{workdir}/file1.txt", "old_string": "wrong", "new_string": "right"}
    # The model moves on; the review comes back while this command runs: it waits for the
    # worker to have kept the fix, not for a time a loaded machine may not keep. The state home
    # is walled off from the implementer, so this test watches it and leaves a marker.
    kept = ap.repo.parent / "fix-kept"
    watcher = threading.Thread(target=_mark_when_kept, args=(ap, kept), daemon=True)
    watcher.start()
    wait = f"until [ -e {shlex.quote(str(kept))} ]; do sleep 0.1; done"
    fake_anthropic.script = [
        [write("file1.txt", "wrong\n")],
        [ToolUse("Bash", {"command": wait})],
        [Text("Fixing the finding."), ToolUse("Edit", fix)],
        [commit("file1.txt", "feat(files): task number 1")],
        [Text("Fixed and committed.")],
    ]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url)

    assert_ran(run)
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 5, fake_anthropic.dump_log()
    # Not with the edit (the review was still out) but with the next tool's result.
    assert "wrong content (file1.txt:1-2)" not in mains[1]
    assert "wrong content (file1.txt:1-2)" in mains[2]
    posts = hook_answers(run, "PostToolUse")
    assert [p.get("decision") for p in posts] == [None, "block", None, None]
    assert stop_blocks(run) == []
    assert (ap.repo / "file1.txt").read_text() == "right\n"

    state = ap.state()
    assert (state["status"], state["iteration"], state["inflight"]) == ("done", 1, None)
    assert [r["decision"] for r in state["autopilot"]["reviewed"]][-1] == "fix"
    names = ap.event_names()
    assert names.index("review.fix") < names.index("review.fix.delivered")
    assert names[-1] == "verdict.done"
    # The edit's review, then the final diff's (by the worker or by the Stop, which supersedes
    # a review of the diff before the commit).
    first, *_, last = openai_fake.requests_for(schema="Review")
    assert len(openai_fake.requests_for(schema="Review")) in (2, 3)
    assert "+wrong" in first.prompt_text and "+right" in last.prompt_text
    # The verdict came after the final diff's review.
    assert openai_fake.requests_for(schema="Verdict")[0].received_at >= last.received_at


# -- 3. the manager is down ---------------------------------------------------------------------


def plan_from_terminal(ap: Autopilot, server: FakeOpenAI, **settings: str) -> None:
    """Start a loop the way a user would from a shell: unclaimed, owned by the first session
    the user types a prompt into (its UserPromptSubmit hook)."""
    server.enqueue(plan_body(2), schema="Plan")
    done = ap.cli("plan", *GOAL.split(), openai_url=server.base_url, settings=settings)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "loop started" in done.stdout
    assert ap.state()["session_id"] is None


def assert_paused_without_block(run: ClaudeRun, ap: Autopilot, error: str) -> dict[str, Any]:
    assert_ran(run)
    assert stop_blocks(run) == []
    assert all(a.get("decision") is None for a in hook_answers(run, "PostToolUse"))
    state = ap.state()
    assert state["status"] == "paused"
    assert state["stop_reason"].startswith("manager unavailable"), state["stop_reason"]
    assert error in state["stop_reason"], state["stop_reason"]
    assert ap.active_markers() != []  # fail closed: the rails stay until the user's stop
    return state


def test_manager_unreachable_pauses(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    server = FakeOpenAI()
    try:
        plan_from_terminal(ap, server)
    finally:
        server.close()  # the port now refuses connections
    fake_anthropic.script = [[Text("Looked around; nothing done yet.")]]

    run = loop_run("Carry on with the plan", server.base_url, {"AUTOPILOT_CODEX_TIMEOUT_S": "5"})

    state = assert_paused_without_block(run, ap, "cannot connect")
    assert len(fake_anthropic.main_requests()) == 1
    assert state["session_id"] == run.session_id  # claimed by its typed prompt
    assert state["iteration"] == 1  # a failed verdict still counts
    (answer,) = hook_answers(run, "Stop")
    assert "paused, manager unavailable" in answer["systemMessage"]
    assert ap.event_names() == ["plan", "claim", "verdict.unavailable"]
    assert_clean_tree(ap.repo)
    assert run.wall_time < 90, run.describe()  # never the host's hook timeout


def test_manager_http_500_pauses_promptly(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    with FakeOpenAI(default=Reply(status=500, text="manager is on fire")) as server:
        server.enqueue(plan_body(2), schema="Plan")

        def after_the_background_review(body: dict[str, Any]) -> list[Any]:
            # The turn ends only once the edit's review has made its three attempts, so the
            # Stop never races the worker for the loop's slot (a loaded machine starts it late).
            deadline = time.monotonic() + 240
            while len(server.requests_for(schema="Review")) < 3:
                assert time.monotonic() < deadline, "the background review never ran"
                time.sleep(0.05)
            return [Text("Wrote file1.txt.")]

        fake_anthropic.script = [[write("file1.txt", "one\n")], after_the_background_review]

        run = loop_run(f"{PLAN} {GOAL}", server.base_url, {"AUTOPILOT_CODEX_TIMEOUT_S": "5"})

        assert_paused_without_block(run, ap, "HTTP 500")
        requests = schemas(server)
    # Three attempts of the background review, which only costs the calls; the Stop tries the
    # final diff's review again, folded with its verdict (one call, three attempts), then the
    # loop is off.
    assert requests == ["Plan"] + ["Review"] * 3 + ["Judgement"] * 3
    assert decisions(ap) == ["plan", "review.unavailable.background", "review.unavailable"]
    (post,) = hook_answers(run, "PostToolUse")
    assert post == {"_raw": ""}
    (stop,) = hook_answers(run, "Stop")
    assert "paused, manager unavailable: HTTP 500" in stop["systemMessage"]
    assert len(fake_anthropic.main_requests()) == 2
    assert (ap.repo / "file1.txt").read_text() == "one\n"
    assert run.wall_time < 90, run.describe()  # never the host's hook timeout


def test_manager_hanging_times_out(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic
) -> None:
    # Held past any bound below (released when the server closes).
    with FakeOpenAI(default=Reply(body=verdict_body("continue"), delay=300)) as server:
        server.enqueue(plan_body(2), schema="Plan")
        fake_anthropic.script = [[Text("Nothing to do.")]]

        run = loop_run(f"{PLAN} {GOAL}", server.base_url, {"AUTOPILOT_CODEX_TIMEOUT_S": "2"})

        assert_paused_without_block(run, ap, "timed out")
        assert schemas(server) == ["Plan", "Verdict"]
    assert ap.event_names() == ["plan", "verdict.unavailable"]
    assert_clean_tree(ap.repo)
    assert run.wall_time < 90, run.describe()  # never the host's hook timeout


# -- 4. budget and iteration limits ------------------------------------------------------------


def test_budget_exhausted_mid_loop(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    # $1 per 1M output tokens, input free: a call costs output_tokens / 1e6, and the guard
    # estimates the answer and a corrective retry at max_output_tokens: $0.008 for a review or
    # verdict (4000 tokens), $0.016 for the plan (8000).
    settings = {"AUTOPILOT_CODEX_BUDGET_USD": "0.018", "AUTOPILOT_CODEX_PRICES": "0,0,1"}
    # This is the manager's budget at work: the implementer's own spend is priced at nothing.
    ap.home.mkdir(parents=True, exist_ok=True)
    free = {"implementer_prices": {"": {"input": 0, "output": 0}}}
    (ap.home / "config.json").write_text(json.dumps(free))
    openai_fake.enqueue(Reply(body=plan_body(2), output_tokens=1000), schema="Plan")
    openai_fake.enqueue(Reply(body=review_body("approve"), output_tokens=1000), schema="Review")
    verdict = Reply(body=verdict_body("continue", done=True), output_tokens=10000)
    openai_fake.enqueue(verdict, schema="Verdict")
    fake_anthropic.script = [
        [write("file1.txt", "one\n")],
        [commit("file1.txt", "feat(files): task number 1")],
        [Text("T1 committed.")],
        [write("file2.txt", "two\n")],  # $0.012 spent: a review could reach $0.020
        [Text("Wrote file2.txt.")],
    ]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url, settings)

    assert_ran(run)
    assert len(fake_anthropic.main_requests()) == 5
    assert len(stop_blocks(run)) == 1
    assert "Task T2 (2/2)" in fake_anthropic.main_body_text(3)
    posts = hook_answers(run, "PostToolUse")
    assert all(p.get("decision") is None and "systemMessage" not in p for p in posts)
    # The background review could not afford file2's review and left it to the Stop, whose
    # guard stops the loop.
    final = hook_answers(run, "Stop")[-1]
    assert "stopped_budget" in final["systemMessage"] and "decision" not in final

    state = ap.state()
    assert state["status"] == "stopped_budget"
    assert state["budget_usd"] == 0.018
    assert state["budget_used_usd"] == pytest.approx(0.012)
    assert state["stop_reason"].startswith("budget used up")
    assert state["iteration"] == 1
    assert decisions(ap) == [
        "plan",
        "review.approve",
        "verdict.continue",
        "review.deferred",
        "review.budget",
    ]
    assert unfolded_schemas(openai_fake) == ["Plan", "Review", "Verdict"]
    assert ap.active_markers() != []  # fail closed: the rails stay until the user's stop
    # The refused review did not undo the edit: the file is there, uncommitted.
    assert (ap.repo / "file2.txt").read_text() == "two\n"
    assert git(ap.repo, "status", "--porcelain").strip() == "?? file2.txt"
    assert git(ap.repo, "log", "-1", "--format=%s").strip() == "feat(files): task number 1"


def test_iteration_limit(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(verdict_body("continue"), schema="Verdict")
    fake_anthropic.script = [[Text("Thinking about T1.")], [Text("Still thinking.")]]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url, {"AUTOPILOT_CODEX_MAX_ITERATIONS": "1"})

    assert_ran(run)
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 2
    assert "at most 1 iteration," in mains[0]
    assert "Manager verdict: continue (iteration 1/1" in mains[1]
    assert len(stop_blocks(run)) == 1
    final = hook_answers(run, "Stop")[-1]
    assert "stopped_iteration_limit" in final["systemMessage"]

    state = ap.state()
    assert state["status"] == "stopped_iteration_limit"
    assert state["iteration"] == 1 and state["max_iterations"] == 1
    assert state["stop_reason"] == "iteration limit 1 reached"
    assert ap.event_names() == ["plan", "verdict.continue", "stop.guard.iterations"]
    assert schemas(openai_fake) == ["Plan", "Verdict"]
    assert_clean_tree(ap.repo)


# -- 5. codex-stop mid-loop --------------------------------------------------------------------


def test_codex_stop_turns_the_hooks_off(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    plan_from_terminal(ap, openai_fake)
    assert len(ap.active_markers()) == 1
    fake_anthropic.script = [[Text("The loop is stopped.")]]

    run = loop_run(f"{STOP} testing", openai_fake.base_url)

    assert_ran(run)
    first = fake_anthropic.main_body_text(0)
    assert "<command-name>/autopilot-codex:codex-stop</command-name>" in first
    assert "autopilot-codex: loop stopped (testing)" in first
    assert len(fake_anthropic.main_requests()) == 1
    assert [r.get("stdout") for r in run.hook_responses("Stop")] == [""]

    state = ap.state()
    assert state["status"] == "stopped"
    assert state["stop_reason"] == "testing"
    assert state["iteration"] == 0
    # The typed slash command is a prompt: it claims the loop for its session, then stops it.
    assert ap.event_names() == ["plan", "claim", "stop"]
    assert ap.active_markers() == []
    assert schemas(openai_fake) == ["Plan"]  # the Stop hook asked the manager nothing
    assert_clean_tree(ap.repo)


# -- 6. no loop --------------------------------------------------------------------------------

# What only a hook answer (or the bridge's own output) can put into a request. The plugin's skill
# descriptions are in every request's skill listing, so their wording is not evidence.
BRIDGE_PHRASES = (
    "hook feedback",
    "hook blocking error",
    "hook additional context",
    "Manager verdict",
    "Review: fix before",
    "loop started",
)


def test_no_loop_hooks_do_nothing(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    fake_anthropic.script = [
        [write("hello.txt", "hello\n")],
        [commit("hello.txt", "chore: say hello")],
        [Text("Said hello.")],
    ]

    run = loop_run("Write hello.txt and commit it", openai_fake.base_url)

    assert_ran(run)
    assert (ap.repo / "hello.txt").read_text() == "hello\n"
    assert git(ap.repo, "log", "-1", "--format=%s").strip() == "chore: say hello"
    events = {e for e, _ in hook_stdouts(run)}
    assert {"PreToolUse", "PostToolUse", "Stop"} <= events, hook_stdouts(run)
    assert [out for _, out in hook_stdouts(run) if out.strip()] == []
    assert {r.get("exit_code") for r in run.hook_responses()} == {0}
    assert openai_fake.requests == []
    assert not (ap.home / "projects").exists()
    assert ap.active_markers() == []
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 3
    assert not any(p in raw for raw in mains for p in BRIDGE_PHRASES)


# -- 7. a second session leaves the first session's loop alone ---------------------------------


def test_second_session_does_not_touch_the_loop(
    loop_run: Any,
    ap: Autopilot,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
    git_repo: Path,
    tmp_path: Path,
) -> None:
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(review_body("approve"), schema="Review")
    fake_anthropic.script = [[write("file1.txt", "one\n")]]
    # Session A plans and edits, then is cut off before its turn ends: the loop stays running.
    first = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url, extra_args=["--max-turns", "1"])
    assert first.result is not None and first.result.get("subtype") == "error_max_turns", (
        first.describe()
    )
    state = settled(ap)
    assert state["status"] == "running"
    assert state["session_id"] == first.session_id
    # Its session ended before its turn did: recorded once, whenever the review lands.
    ended = decisions(ap)
    assert ended.count("session.ended") == 1, ended
    assert [d for d in ended if d != "session.ended"] == ["plan", "review.approve"]
    before = ap.snapshot()
    asked = len(openai_fake.requests)

    with FakeAnthropic(workdir=git_repo, log_path=tmp_path / "second.jsonl") as second_api:
        second_api.script = [
            [write("file2.txt", "two\n")],
            [ToolUse("Bash", {"command": "git status --short"})],
            [Text("Session B is done.")],
        ]
        second = loop_run("Write file2.txt", openai_fake.base_url, anthropic_url=second_api.url)
        mains = [r.raw for r in second_api.main_requests()]

    assert_ran(second)
    assert second.session_id and second.session_id != first.session_id
    assert (ap.repo / "file2.txt").read_text() == "two\n"
    assert ap.snapshot() == before  # state, ledger and active marker byte for byte
    assert len(openai_fake.requests) == asked
    assert stop_blocks(second) == []
    assert [out for _, out in hook_stdouts(second) if out.strip()] == []
    assert len(mains) == 3
    assert not any(p in raw for raw in mains for p in BRIDGE_PHRASES)


# -- 8. stall ----------------------------------------------------------------------------------


def test_stalled_implementer_pauses_before_the_host_cap(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(review_body("approve"), schema="Review")
    # More continues than the loop should ever ask for.
    openai_fake.enqueue(*[verdict_body("continue") for _ in range(10)], schema="Verdict")
    fake_anthropic.script = [
        [write("file1.txt", "one\n")],
        [commit("file1.txt", "feat(files): task number 1")],
        *[[Text(f"Idle turn {n}.")] for n in range(1, 10)],
    ]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url)

    assert_ran(run)
    assert not run.timed_out
    blocks = stop_blocks(run)
    assert 0 < len(blocks) < 8
    assert len(blocks) == 3  # the default stall_limit
    final = hook_answers(run, "Stop")[-1]
    assert "decision" not in final and "stalled" in final["systemMessage"]
    mains = mains_raw(fake_anthropic)
    assert len(mains) == 2 + 1 + len(blocks)
    for n in (1, 2, 3):
        assert f"Manager verdict: continue (iteration {n}/" in mains[2 + n]

    state = ap.state()
    assert state["status"] == "paused"
    assert "stalled" in state["stop_reason"]
    assert state["idle_stop_blocks"] == 3
    assert decisions(ap) == [
        "plan",
        "review.approve",
        "verdict.continue",
        "verdict.continue",
        "verdict.continue",
        "stop.guard.stalled",
    ]
    # The edit's review ran in the background before the first Stop, or (on a loaded machine)
    # had not started yet and the first Stop folded it into its verdict: one call either way.
    assert schemas(openai_fake) in (
        ["Plan", "Review", "Verdict", "Verdict", "Verdict"],
        ["Plan", "Judgement", "Verdict", "Verdict"],
    )
    assert (ap.repo / "file1.txt").read_text() == "one\n"
    assert_clean_tree(ap.repo)


def test_idle_implementer_without_commits_yields_before_the_host_cap(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    """Never a tool, never a commit: the no-progress and stall guards race; either way the loop
    must let Claude stop on its own, well before Claude Code's 8-block override."""
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(*[verdict_body("continue") for _ in range(10)], schema="Verdict")
    fake_anthropic.script = [[Text(f"Idle turn {n}.")] for n in range(1, 10)]

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url)

    assert_ran(run)
    blocks = stop_blocks(run)
    assert 0 < len(blocks) < 8
    assert len(fake_anthropic.main_requests()) == len(blocks) + 1
    final = hook_answers(run, "Stop")[-1]
    assert "decision" not in final
    state = ap.state()
    # Idle turns (no tool, no commit) pause the loop, which can be resumed; never an abort.
    assert state["status"] == "paused", state
    assert "stalled" in state["stop_reason"]
    assert ap.active_markers() != []  # fail closed: the rails stay until the user's stop
    assert len(openai_fake.requests_for(schema="Verdict")) <= 3
    assert ap.event_names()[0] == "plan" and len(ap.events()) == 1 + len(blocks) + 1
    assert_clean_tree(ap.repo)


# -- 9. the plugin validates -------------------------------------------------------------------


def test_plugin_validates_strict(claude_bin: Path, tmp_path: Path) -> None:
    home = tmp_path / "validate-home"
    scratch = tmp_path / "validate-tmp"
    home.mkdir()
    scratch.mkdir()
    env = build_env(home=home, tmpdir=scratch, anthropic_url="http://127.0.0.1:9")
    done = subprocess.run(
        [str(claude_bin), "plugin", "validate", str(ROOT), "--strict"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout + done.stderr, done.stdout + done.stderr


# -- safety rails on the real host -------------------------------------------------------------


def test_rails_deny_destructive_commands_in_the_real_cli(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    plan_from_terminal(ap, openai_fake)
    (ap.repo / ".env").write_text("API_TOKEN=do-not-read\n")
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": "git reset --hard HEAD && touch reset-ran"})],
        [ToolUse("Bash", {"command": "cat .env > leaked.txt"})],
        [ToolUse("Read", {"file_path": "{workdir}/.env"})],
        [Text("I was stopped by the rails.")],
    ]

    run = loop_run("Clean up the repository", openai_fake.base_url)

    assert run.ok, run.describe()
    denials = run.result["permission_denials"] if run.result else []
    assert len(denials) == 3, run.describe()
    assert not (ap.repo / "reset-ran").exists()
    assert not (ap.repo / "leaked.txt").exists()
    # Each reason reached the model as the tool's error.
    for rule in ("[reset-hard]", "[secrets]"):
        assert any(rule in fake_anthropic.body_text(i) for i in range(len(fake_anthropic.requests)))
    assert "do-not-read" not in "".join(r.raw for r in fake_anthropic.requests)
    assert ap.state()["status"] == "done"


def test_rails_read_the_shell_and_keep_the_supervisor_the_users_in_the_real_cli(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    # Three bypass forms peers' rails let through: a force push wrapped in env and sh -c, the
    # implementer switching its own loop off, and removing the loop's marker by variable.
    plan_from_terminal(ap, openai_fake)
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": "env GIT_TRACE=1 sh -c 'git push --force origin main'"})],
        [ToolUse("Bash", {"command": "autopilot-codex stop && touch stopped-by-model"})],
        [ToolUse("Bash", {"command": "rm -f $AUTOPILOT_CODEX_HOME/active/*"})],
        [Text("The rails stopped all three.")],
    ]

    run = loop_run("Tidy up", openai_fake.base_url)

    assert run.ok, run.describe()
    denials = run.result["permission_denials"] if run.result else []
    assert len(denials) == 3, run.describe()
    assert not (ap.repo / "stopped-by-model").exists()
    bodies = "".join(fake_anthropic.body_text(i) for i in range(len(fake_anthropic.requests)))
    for rule in ("[force-push]", "[supervisor]", "[state]"):
        assert rule in bodies, rule
    # The loop was never switched off by its implementer: its own verdict ended it.
    assert ap.state()["status"] == "done"


def test_a_heredoc_line_and_a_nested_agent_are_denied_in_the_real_cli(
    loop_run: Any, ap: Autopilot, fake_anthropic: FakeAnthropic, openai_fake: FakeOpenAI
) -> None:
    # A script heredoc'ed into sh on the same line (issue 29), and a nested host CLI (issue 20).
    plan_from_terminal(ap, openai_fake)
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fake_anthropic.script = [
        [ToolUse("Bash", {"command": "cat <<EOF | sh\ngit push -f origin main\nEOF"})],
        [ToolUse("Bash", {"command": "env claude -p 'finish it' && touch nested-ran"})],
        [Text("The rails stopped both.")],
    ]

    run = loop_run("Tidy up", openai_fake.base_url)

    assert run.ok, run.describe()
    denials = run.result["permission_denials"] if run.result else []
    assert len(denials) == 2, run.describe()
    assert not (ap.repo / "nested-ran").exists()
    bodies = "".join(fake_anthropic.body_text(i) for i in range(len(fake_anthropic.requests)))
    for rule in ("[force-push]", "[host-cli]"):
        assert rule in bodies, rule


# -- reviews that converge (issue 23) ------------------------------------------------------------


@pytest.mark.parametrize("mode", ["stop", "edit"])
def test_review_that_repeats_an_unsatisfiable_finding_stops_the_loop(
    loop_run: Any,
    ap: Autopilot,
    fake_anthropic: FakeAnthropic,
    openai_fake: FakeOpenAI,
    mode: str,
) -> None:
    """Every review answers `fix` with the same finding the implementer cannot satisfy, and the
    implementer works (and commits) at every turn, so the stall and no-progress guards stay
    quiet: the convergence rules must end the loop on their own."""
    openai_fake.enqueue(plan_body(2), schema="Plan")
    openai_fake.enqueue(*[review_body("fix") for _ in range(20)], schema="Review")
    turns: list[list[Any]] = []
    for n in range(10):
        turns += [
            [write("file1.txt", f"attempt {n}\n")],
            [commit("file1.txt", f"attempt {n}")],
            [Text(f"Attempt {n} done.")],
        ]
    fake_anthropic.script = turns

    run = loop_run(f"{PLAN} {GOAL}", openai_fake.base_url, {"AUTOPILOT_CODEX_REVIEW": mode})

    assert_ran(run)
    assert not run.timed_out
    reviews = openai_fake.requests_for(schema="Review")
    # Within 6 manager calls after the first repeat (the second review).
    assert len(reviews) <= 1 + 6
    mains = mains_raw(fake_anthropic)
    # Each request carries the whole conversation: a delivery is a request whose count of the
    # finding's text grew (Claude Code quotes a Stop's reason more than once).
    counts = [m.count("Fix: write the right content") for m in mains]
    assert sum(b > a for a, b in zip([0, *counts], counts, strict=False)) == 2
    assert "marked disputed" in mains[-1]
    state = ap.state()
    assert state["status"] == "paused", state["stop_reason"]
    assert state["stop_reason"].startswith("reviews not converging")
    final = hook_answers(run, "Stop")[-1]
    assert "decision" not in final and "not converging" in final["systemMessage"]
    shown = ap.cli("status", openai_url=openai_fake.base_url).stdout
    assert "F1 [disputed" in shown and "said 4x verbatim" in shown
