"""`run --lanes 2` with the real Claude Code CLI in each lane (fake Anthropic API) and the fake
OpenAI server as the manager: a task that depends on another runs in its own worktree from the
integration head after the first merged; both land through the queue and the user's branch
fast-forwards; and three independent tasks whose lanes run at once (the fake model answers each
lane its own script, found by the lane's worktree in the request, and holds every lane's first
request until all three asked), all merged."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.lanes.names import component
from tests.conftest import review_body, task
from tests.fakes.keyed import Keyed
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import LAUNCHER, Autopilot
from .claude_cli import DEFAULT_MODEL, build_env, git
from .fake_anthropic import FakeAnthropic, Text, ToolUse

pytestmark = pytest.mark.e2e
# A lane's requests name its worktree (`<lanes home>/<run>/<task>`) and its branch
# (`autopilot/<run>/task/<task>`), the task id as `names.component` writes it (`T1`: `+541`):
# that picks the lane's script.
LANE = r"lanes-\d{8}-\d{6}/(?:task/)?([a-z0-9+_-]+)"


def work(task_id: str) -> list[list[Text | ToolUse]]:
    """One lane: a round that writes and commits its file, then a verifier round."""
    command = f"printf '{task_id}\\n' > {task_id}.txt && git add {task_id}.txt && git commit -qm 'add {task_id}'"
    return [
        [ToolUse("Bash", {"command": command})],
        [Text(f"Wrote {task_id}.txt.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]


def lanes_env(
    claude_bin: Path, ap: Autopilot, home: Path, fake: FakeAnthropic, manager: FakeOpenAI
) -> dict[str, str]:
    """What a lanes driver gets: the real Claude Code CLI as each lane's host, the fakes."""
    return build_env(
        home=home,
        tmpdir=Path(tempfile.mkdtemp(prefix="cc-e2e-")),
        anthropic_url=fake.url,
        extra_env={
            **ap.env(manager.base_url),
            "AUTOPILOT_CODEX_CLAUDE_CMD": str(claude_bin),
            "ANTHROPIC_MODEL": DEFAULT_MODEL,
        },
    )


def lanes_run(
    claude_bin: Path,
    ap: Autopilot,
    home: Path,
    fake: FakeAnthropic,
    manager: FakeOpenAI,
    goal: str,
    lanes: int,
    *extra: str,
) -> subprocess.CompletedProcess[str]:
    """`run --lanes N --json [extra...]` through the real Claude Code CLI in each lane."""
    env = lanes_env(claude_bin, ap, home, fake, manager)
    return subprocess.run(
        [
            str(LAUNCHER),
            "-C",
            str(ap.repo),
            "run",
            goal,
            "--implementer",
            "claude",
            "--manager",
            "openai",
            "--lanes",
            str(lanes),
            "--json",
            "--timeout",
            "90",
            *extra,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        env=env,
        timeout=400,
    )


def test_a_dependent_task_lands_after_its_dependency_through_real_claude_lanes(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    fake_anthropic.script = [*work("T1"), *work("T2")]
    with FakeOpenAI() as manager:
        tasks = [task(1, depends_on=[]), task(2, depends_on=["T1"])]
        manager.enqueue({"summary": "two", "tasks": tasks}, schema="Plan")
        manager.enqueue(review_body("approve"), review_body("approve"), schema="Review")
        proc = lanes_run(claude_bin, ap, home, fake_anthropic, manager, "write the two files", 2)
    assert proc.returncode == 0, proc.stdout + proc.stderr + fake_anthropic.dump_log()
    record = json.loads(proc.stdout)
    assert [(t["id"], t["state"]) for t in record["tasks"]] == [("T1", "merged"), ("T2", "merged")]
    assert record["manager_calls"] == 3
    # Every scripted turn went to a real `claude -p` of a lane: two rounds a task.
    assert len(fake_anthropic.main_requests()) == 6, fake_anthropic.dump_log()
    assert git(git_repo, "log", "--format=%s", "-n", "5").count("add T") == 2
    assert (git_repo / "T1.txt").read_text() == "T1\n"
    assert (git_repo / "T2.txt").read_text() == "T2\n"


def rollouts(ap: Autopilot) -> dict[str, list[dict[str, Any]]]:
    """Each lane's rounds rollout (in the state home, kept after its worktree went), by task."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in (ap.home / "projects").glob("*/rounds/rollout.jsonl"):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        found[lines[0]["goal"].split(":", 1)[0].removeprefix("Task ")] = lines
    return found


def crashes(ap: Autopilot) -> list[str]:
    """The bridge's crash log, but for one known failure: a lane's worktree is a linked one,
    whose object store lies outside it, and the shadow snapshot's walled git call does not see
    it ("bad object"), so lanes run without snapshots (logged, the rounds go on)."""
    log = ap.home / "logs" / "bridge.log"
    entries = log.read_text().split("--- autopilot-codex ")[1:] if log.exists() else []
    known = ("shadow snapshot", "git pack-objects failed", "fatal: bad object")
    return [e for e in entries if not all(k in e for k in known)]


def merged_at_once(ap: Autopilot, record: dict[str, Any], ids: list[str], user_sha: str) -> None:
    """Every task merged, its lane's run alive while every other one was, and the user's branch
    fast-forwarded to the integration branch holding them all."""
    assert [(t["id"], t["state"]) for t in record["tasks"]] == [(t, "merged") for t in ids]
    # The manager: the plan and one review a task.
    assert record["status"] == "complete" and record["manager_calls"] == 1 + len(ids)
    # The overlap, from what each lane's own rounds driver wrote: every lane's run began before
    # any lane's run ended, so at the last start every lane process was alive.
    runs = rollouts(ap)
    assert sorted(runs) == ids, runs
    starts = [runs[t][0]["started"] for t in ids]
    ends = [next(r["end"] for r in runs[t] if r["kind"] == "end") for t in ids]
    assert max(starts) < min(ends), (starts, ends)
    roles = [[r["role"] for r in runs[t] if r["kind"] == "round"] for t in ids]
    assert roles == [["implement", "verify"]] * len(ids)
    assert record["finish"].startswith("Your branch "), record["finish"]
    head = git(ap.repo, "rev-parse", "HEAD").strip()
    assert head == git(ap.repo, "rev-parse", f"autopilot/{record['run']}/integration").strip()
    git(ap.repo, "merge-base", "--is-ancestor", user_sha, head)
    assert git(ap.repo, "status", "--porcelain").strip() == ""
    for t in ids:
        assert (ap.repo / f"{t}.txt").read_text() == f"{t}\n"
    assert crashes(ap) == []


def test_three_independent_tasks_run_at_once_and_all_merge_through_real_claude_lanes(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    ids = ["T1", "T2", "T3"]
    keyed = Keyed({component(t): work(t) for t in ids}, LANE, meet=3, serial=True)
    fake_anthropic.chooser = keyed
    user_sha = git(git_repo, "rev-parse", "HEAD").strip()
    with FakeOpenAI() as manager:
        tasks = [task(n, depends_on=[]) for n in (1, 2, 3)]
        manager.enqueue({"summary": "three", "tasks": tasks}, schema="Plan")
        manager.enqueue(*[review_body("approve")] * 3, schema="Review")
        proc = lanes_run(claude_bin, ap, home, fake_anthropic, manager, "write three files", 3)
    why = proc.stdout + proc.stderr + f"\nmissed meeting: {keyed.missed} asked: {keyed.asked}"
    assert proc.returncode == 0, why + fake_anthropic.dump_log()
    merged_at_once(ap, json.loads(proc.stdout), ids, user_sha)
    # Each lane answered from its own script: two rounds, three requests.
    assert {t: len(v) for t, v in keyed.asked.items()} == {component(t): 3 for t in ids}
