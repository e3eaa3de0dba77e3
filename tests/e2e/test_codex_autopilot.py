"""The loop with the real Codex CLI as the implementer host: hooks installed by
``install codex --user`` (trusted, no bypass flag), a scripted model, a fake manager.

Codex has no cap on Stop blocks, so the stall scenario is the loop's own guard at work.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands import install
from tests.conftest import plan_body, review_body, verdict_body
from tests.fakes.openai_server import FakeOpenAI
from tests.reviews import unfolded, unfolded_schemas

from .autopilot_helpers import Autopilot
from .claude_cli import git
from .codex_cli import CodexRun
from .codex_fixtures import CodexRunner
from .fake_codex_model import FakeCodexModel, Patch, Say, Shell

pytestmark = pytest.mark.e2e

GOAL = "write file1.txt and file2.txt"


@pytest.fixture
def ap(git_repo: Path, tmp_path: Path, codex_home: Path) -> Iterator[Autopilot]:
    assert install.main(["install", "codex", "--user"], env={"CODEX_HOME": str(codex_home)}) == 0
    autopilot = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    yield autopilot
    crash_log = autopilot.home / "logs" / "bridge.log"
    assert not crash_log.exists(), crash_log.read_text()


def plan(ap: Autopilot, server: FakeOpenAI, tasks: int = 2) -> None:
    """Start a loop from the terminal: unclaimed, owned by the first session it hears."""
    server.enqueue(plan_body(tasks), schema="Plan")
    done = ap.cli("plan", *GOAL.split(), openai_url=server.base_url)
    assert done.returncode == 0, done.stderr + done.stdout
    assert ap.state()["session_id"] is None


def loop_run(
    codex: CodexRunner, ap: Autopilot, server_url: str, ports: list[int], **settings: str
) -> CodexRun:
    run: CodexRun = codex(
        "carry on with the autopilot plan",
        extra_env=ap.env(server_url, settings),
        forward_ports=ports,
        timeout=90,
    )
    assert run.ok, run.describe()
    return run


def add(name: str, content: str) -> Patch:
    body = "".join(f"+{line}\n" for line in content.splitlines())
    return Patch(f"*** Begin Patch\n*** Add File: {name}\n{body}*** End Patch\n")


def commit(name: str, subject: str) -> Shell:
    return Shell(f'git add {name} && git commit -q -m "{subject}"')


def raws(fake: FakeCodexModel) -> list[str]:
    return [r.raw for r in fake.model_requests]


# The background review's own bookkeeping interleaves with these; what the loop decided is this.
DECISIONS = ("plan", "review.approve", "review.fix", "verdict.", "stop.guard.")


def decisions(ap: Autopilot) -> list[str]:
    names = [n for n in ap.event_names() if n.startswith(DECISIONS)]
    # A review replayed from the cache is the same decision, not a new one.
    return [n for i, n in enumerate(names) if not (n.startswith("review.") and names[i - 1] == n)]


def test_happy_path_to_done(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, openai_fake: FakeOpenAI
) -> None:
    plan(ap, openai_fake)
    openai_fake.enqueue(*[review_body("approve")] * 4, schema="Review")
    openai_fake.enqueue(verdict_body("continue", done=True), verdict_body("done"), schema="Verdict")
    fake_codex.script = [
        [Say("Starting T1."), add("file1.txt", "one")],
        [commit("file1.txt", "feat(files): task number 1")],
        "T1 is committed.",
        [Say("On to T2."), add("file2.txt", "two")],
        [commit("file2.txt", "feat(files): task number 2")],
        "T2 is committed.",
    ]
    base = git(ap.repo, "rev-parse", "HEAD").strip()

    run = loop_run(codex, ap, openai_fake.base_url, [openai_fake.port])

    requests = raws(fake_codex)
    assert len(requests) == 6
    # The continue verdict's block carried the next task's contract, and only then.
    assert all("Task T2 (2/2)" not in raw for raw in requests[:3])
    assert "Task T2 (2/2): task number 2" in requests[3]
    assert run.last_message == "T2 is committed."
    assert (ap.repo / "file1.txt").read_text() == "one\n"
    assert (ap.repo / "file2.txt").read_text() == "two\n"
    subjects = git(ap.repo, "log", "--format=%s", f"{base}..HEAD").splitlines()
    assert subjects == ["feat(files): task number 2", "feat(files): task number 1"]
    state = ap.state()
    assert state["status"] == "done"
    assert state["autopilot"]["completed_tasks"] == ["T1", "T2"]
    assert state["session_id"] == run.thread_id
    assert decisions(ap) == [
        "plan",
        "review.approve",
        "verdict.continue",
        "review.approve",
        "verdict.done",
    ]
    # A Stop that came before its edit's background review started folds the two calls.
    assert unfolded_schemas(openai_fake).count("Verdict") == 2
    review1 = next(r for r in unfolded(openai_fake) if r.schema_name in ("Review", "Judgement"))
    assert "file1.txt" in review1.prompt_text and "+one" in review1.prompt_text
    assert ap.active_markers() == []


def test_a_review_fix_reaches_codex_at_the_next_hook_that_can_speak(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, openai_fake: FakeOpenAI
) -> None:
    # Reviews run in the background (Codex has no rewake): the fix is handed over at the next
    # hook that can speak, here the Stop, which waits for the review of the diff it judges.
    plan(ap, openai_fake, tasks=1)
    openai_fake.enqueue(review_body("fix"), *[review_body("approve")] * 3, schema="Review")
    openai_fake.enqueue(verdict_body("done"), schema="Verdict")
    fix = "*** Begin Patch\n*** Update File: file1.txt\n@@\n-wrong\n+right\n*** End Patch\n"
    fake_codex.script = [
        [Patch(add("file1.txt", "wrong").patch, call_id="call_wrong")],
        "Wrote file1.txt.",
        [Say("Fixing the finding."), Patch(fix)],
        [commit("file1.txt", "feat(files): task number 1")],
        "Fixed and committed.",
    ]

    loop_run(codex, ap, openai_fake.base_url, [openai_fake.port])

    requests = raws(fake_codex)
    told = [i for i, raw in enumerate(requests) if "wrong content (file1.txt:1-2)" in raw]
    assert told and "write the right content" in requests[told[0]], requests
    assert (ap.repo / "file1.txt").read_text() == "right\n"
    state = ap.state()
    assert state["status"] == "done"
    assert decisions(ap)[:2] == ["plan", "review.fix"]
    assert decisions(ap)[-2:] == ["review.approve", "verdict.done"]
    assert unfolded_schemas(openai_fake).count("Verdict") == 1


def test_manager_down_pauses_without_a_block(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel
) -> None:
    server = FakeOpenAI()
    try:
        plan(ap, server)
    finally:
        server.close()  # nothing listens there any more
    fake_codex.script = ["Looked around; nothing done yet."]

    run = loop_run(codex, ap, server.base_url, [], AUTOPILOT_CODEX_TIMEOUT_S="5")

    assert len(fake_codex.model_requests) == 1
    assert run.last_message == "Looked around; nothing done yet."
    state = ap.state()
    assert state["status"] == "paused"
    assert state["stop_reason"].startswith("manager unavailable"), state["stop_reason"]
    assert state["session_id"] == run.thread_id
    assert ap.event_names() == ["plan", "claim", "verdict.unavailable"]
    assert ap.active_markers() != []  # fail closed: the rails stay until the user's stop
    assert run.wall_time < 90, run.describe()  # never the host's hook timeout


def test_stall_guard_stops_an_always_ending_implementer(
    codex: CodexRunner, ap: Autopilot, fake_codex: FakeCodexModel, openai_fake: FakeOpenAI
) -> None:
    plan(ap, openai_fake)
    openai_fake.enqueue(*[review_body("approve")] * 3, schema="Review")
    # More continues than the loop should ever ask for: Codex itself would obey them all.
    openai_fake.enqueue(*[verdict_body("continue") for _ in range(10)], schema="Verdict")
    fake_codex.script = [
        [add("file1.txt", "one")],
        [commit("file1.txt", "feat(files): task number 1")],
        *[f"Idle turn {n}." for n in range(1, 10)],
    ]

    loop_run(codex, ap, openai_fake.base_url, [openai_fake.port])

    requests = raws(fake_codex)
    assert len(requests) == 2 + 1 + 3  # the default stall_limit is 3 blocks
    for n in (1, 2, 3):
        assert f"Manager verdict: continue (iteration {n}/" in requests[2 + n]
    state: dict[str, Any] = ap.state()
    assert state["status"] == "paused"
    assert "stalled" in state["stop_reason"]
    assert decisions(ap) == [
        "plan",
        "review.approve",
        "verdict.continue",
        "verdict.continue",
        "verdict.continue",
        "stop.guard.stalled",
    ]
    assert git(ap.repo, "status", "--porcelain").strip() == ""
