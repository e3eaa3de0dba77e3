"""Lanes' failures through the real Claude Code CLI in each lane (fake Anthropic API, each lane
its own script through `Keyed`) and the fake OpenAI server as the manager: two lanes editing
the same lines, and a check red only on the merged tree, each end in a manager-made follow-up
that lands, never a forced merge; a budget fitting two lanes' reservations never starts a
third while two run; a `kill -9` of the driver mid-run and `run --resume` lose no commit and
run no merged task again."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.lanes.names import component
from autopilot_codex.rounds.hold import alive
from tests.conftest import review_body, task
from tests.fakes.keyed import Keyed
from tests.fakes.openai_server import FakeOpenAI

from .autopilot_helpers import LAUNCHER, Autopilot
from .claude_cli import git
from .fake_anthropic import FakeAnthropic, Text, ToolUse
from .test_lanes_e2e import LANE, crashes, lanes_env, lanes_run, rollouts, work

pytestmark = pytest.mark.e2e

FOLLOW_UP = task(9, depends_on=[]) | {"title": "join both lanes' work on the merged head"}


def writes(path: str, text: str, message: str) -> list[list[Text | ToolUse]]:
    """One lane whose round writes `path` and commits it, then a verifier round."""
    command = f"printf '{text}' > {path} && git add -A && git commit -qm '{message}'"
    return [
        [ToolUse("Bash", {"command": command})],
        [Text(f"Wrote {path}.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]


def refused_then_followed_up(
    claude_bin: Path,
    ap: Autopilot,
    home: Path,
    fake: FakeAnthropic,
    scripts: dict[str, list[list[Text | ToolUse]]],
    follow_up: list[list[Text | ToolUse]],
    *extra: str,
) -> dict[str, Any]:
    """Two independent lanes (alive at once), the second landing refused, the manager's
    follow-up run and landed; the run's record. The follow-up lane answers from the fake's own
    script: its requests may name the refused lane (its diff is the follow-up's context), whose
    script is used up by then, so `Keyed` gives it None either way."""
    keyed = Keyed({component(t): turns for t, turns in scripts.items()}, LANE, meet=2, serial=True)
    fake.chooser = keyed
    fake.script = follow_up
    with FakeOpenAI() as manager:
        manager.enqueue({"summary": "two", "tasks": [task(1), task(2)]}, schema="Plan")
        manager.enqueue(review_body("approve"), schema="Review")
        manager.enqueue(FOLLOW_UP, schema="Task")
        manager.enqueue(review_body("approve"), schema="Review")
        proc = lanes_run(claude_bin, ap, home, fake, manager, "write both files", 2, *extra)
        asked = manager.requests_for(schema="Task")
    why = proc.stdout + proc.stderr + f"\nmissed: {keyed.missed} asked: {keyed.asked}"
    assert proc.returncode == 0, why + fake.dump_log()
    record: dict[str, Any] = json.loads(proc.stdout)
    # The follow-up was asked once, with the refused lane's diff as its context.
    assert len(asked) == 1, asked
    record["asked"] = asked[0].prompt_text
    assert not keyed.missed, why
    return record


def landed_by_follow_up(ap: Autopilot, record: dict[str, Any], refusal: str) -> None:
    """Whichever lane landed first, the other was refused for `refusal` and kept unmerged; its
    follow-up (`<id>-fix1`) merged; the user's branch holds the follow-up."""
    by_state = {t["state"]: t for t in record["tasks"] if not t["follows"]}
    assert sorted(by_state) == ["merged", "refused"], record["tasks"]
    refused = by_state["refused"]
    assert refused["why"].startswith(f"refused ({refusal})"), refused
    (fix,) = (t for t in record["tasks"] if t["follows"])
    assert (fix["id"], fix["state"]) == (f"{refused['id']}-fix1", "merged"), fix
    assert fix["title"] == FOLLOW_UP["title"]
    assert f"Refused for: {refusal}" in record["asked"]
    assert f"+{refused['id']}" in record["asked"]
    # The manager: the plan, two reviews, the follow-up.
    assert (record["status"], record["manager_calls"]) == ("complete", 4), record
    # Nothing forced: the refused lane's branch is kept, its commit never on the user's branch.
    assert git(ap.repo, "rev-parse", "--verify", refused["branch"]).strip()
    assert git(ap.repo, "branch", "--contains", refused["branch"], "--list", "main") == ""
    assert f"add {refused['id']}" not in git(ap.repo, "log", "--format=%s", "main")
    assert crashes(ap) == []


def test_two_lanes_editing_the_same_lines_get_a_follow_up_never_a_forced_merge(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    scripts = {t: writes("shared.txt", f"{t}\\n", f"add {t}") for t in ("T1", "T2")}
    follow_up = writes("shared.txt", "T1\\nT2\\n", "join T1 and T2")
    record = refused_then_followed_up(claude_bin, ap, home, fake_anthropic, scripts, follow_up)
    landed_by_follow_up(ap, record, "conflict")
    assert (git_repo / "shared.txt").read_text() == "T1\nT2\n"


def test_a_check_red_on_the_merged_tree_blocks_that_merge_through_real_claude_lanes(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Each lane's tree passes the check alone (one file); the merged tree has both and fails
    it; the follow-up joins them into one file, which passes."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    scripts = {t: writes(f"{t}.txt", f"{t}\\n", f"add {t}") for t in ("T1", "T2")}
    join = "git rm -q --ignore-unmatch T1.txt T2.txt && printf 'T1\\nT2\\n' > both.txt"
    follow_up: list[list[Text | ToolUse]] = [
        [ToolUse("Bash", {"command": f"{join} && git add -A && git commit -qm 'join'"})],
        [Text("Joined both files.\n::potter(ready)")],
        [Text("Every requirement checked against the files.\n::potter(exit)")],
    ]
    check = "sh -c '! { test -e T1.txt && test -e T2.txt; }'"
    record = refused_then_followed_up(
        claude_bin, ap, home, fake_anthropic, scripts, follow_up, "--check", check
    )
    landed_by_follow_up(ap, record, "checks")
    assert not ((git_repo / "T1.txt").exists() and (git_repo / "T2.txt").exists())
    assert (git_repo / "both.txt").read_text() == "T1\nT2\n"


def test_a_budget_fitting_two_lanes_never_starts_a_third_through_real_claude_lanes(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """`--budget 1 --lane-budget 0.45`: two reservations fit (0.9), a third does not (1.35),
    so the third lane starts only once a lane ended and gave back what it did not spend. The
    first two meet (each one's first request waits for the other's), so both were running at
    once and the third's start could not have been for want of a second lane."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    ids = ["T1", "T2", "T3"]
    keyed = Keyed({component(t): work(t) for t in ids}, LANE, meet=2, serial=True)
    fake_anthropic.chooser = keyed
    # Each request's cost known and small (1000 input tokens), whatever Claude Code's prompt
    # weighs: a lane spends cents, so once one ended (and its landing's hold went back) a third
    # reservation fits next to the one still held.
    fake_anthropic.input_tokens = 1000
    with FakeOpenAI() as manager:
        tasks = [task(n, depends_on=[]) for n in (1, 2, 3)]
        manager.enqueue({"summary": "three", "tasks": tasks}, schema="Plan")
        manager.enqueue(*[review_body("approve")] * 3, schema="Review")
        budget = ("--budget", "1", "--lane-budget", "0.45")
        proc = lanes_run(claude_bin, ap, home, fake_anthropic, manager, "three", 3, *budget)
    why = proc.stdout + proc.stderr + f"\nmissed: {keyed.missed} asked: {keyed.asked}"
    assert proc.returncode == 0, why + fake_anthropic.dump_log()
    record = json.loads(proc.stdout)
    assert [(t["id"], t["state"]) for t in record["tasks"]] == [(t, "merged") for t in ids]
    assert record["spent"]["usd"] <= 1.0, record["spent"]
    # The cost the fake's usage makes known: the same for every lane, far under its reservation.
    assert len({t["usd"] for t in record["tasks"]}) == 1 and record["tasks"][0]["usd"] < 0.1
    # From the record and from what each lane's own rounds driver wrote: the third lane began
    # after one of the first two ended, and the first two overlapped.
    t1, t2, t3 = record["tasks"]
    assert t3["started"] >= min(t1["ended"], t2["ended"]), record["tasks"]
    runs = rollouts(ap)
    starts = {t: runs[t][0]["started"] for t in ids}
    ends = {t: next(r["end"] for r in runs[t] if r["kind"] == "end") for t in ids}
    assert max(starts["T1"], starts["T2"]) < min(ends["T1"], ends["T2"]), (starts, ends)
    assert starts["T3"] >= min(ends["T1"], ends["T2"]), (starts, ends)
    assert not keyed.missed, why
    assert crashes(ap) == []


def lanes_record(ap: Autopilot) -> dict[str, Any] | None:
    """The lanes run's record as last written (whole and atomically), None before the first."""
    found = list((ap.home / "projects").glob("*/lanes/lanes.json"))
    return json.loads(found[0].read_text()) if found else None


def until(what: Callable[[], bool], driver: subprocess.Popen[bytes], said: Path) -> None:
    """Poll until `what` holds; a driver that ended first fails the test (nothing is timed)."""
    while not what():
        assert driver.poll() is None, said.read_text()
        time.sleep(0.05)


def state_of(ap: Autopilot, task_id: str) -> str:
    record = lanes_record(ap)
    tasks = {t["id"]: t for t in record["tasks"]} if record else {}
    return str(tasks[task_id]["state"]) if task_id in tasks else ""


def test_kill_9_of_the_driver_and_resume_lose_no_commit_and_rerun_no_merged_task(
    claude_bin: Path, git_repo: Path, home: Path, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """T1 and T2 at once, T3 after T1. T2's first request is held by the fake: the driver is
    killed once T1 merged and T2's lane is mid-round. T2's lane (its own process group) lives
    on and ends; `run --resume` takes its final record, lands it and runs T3."""
    ap = Autopilot(repo=git_repo, home=tmp_path / "autopilot-home")
    ids = ["T1", "T2", "T3"]
    release = threading.Event()
    keyed = Keyed(
        {component(t): work(t) for t in ids}, LANE, holds={component("T2"): release}, serial=True
    )
    fake_anthropic.chooser = keyed
    said = tmp_path / "driver.err"
    with FakeOpenAI() as manager:
        tasks = [task(1, depends_on=[]), task(2, depends_on=[]), task(3, depends_on=["T1"])]
        manager.enqueue({"summary": "three", "tasks": tasks}, schema="Plan")
        manager.enqueue(*[review_body("approve")] * 3, schema="Review")
        env = lanes_env(claude_bin, ap, home, fake_anthropic, manager)
        argv = [str(LAUNCHER), "-C", str(git_repo), "run"]
        lanes = ["write the files", "--implementer", "claude", "--manager", "openai"]
        lanes += ["--lanes", "2", "--timeout", "90"]
        try:
            with said.open("wb") as err:
                driver = subprocess.Popen(
                    [*argv, *lanes], stdout=subprocess.DEVNULL, stderr=err, env=env
                )
            until(lambda: state_of(ap, "T1") == "merged", driver, said)
            until(lambda: component("T2") in keyed.asked, driver, said)
            driver.kill()
            driver.wait()
            killed = lanes_record(ap)
            assert killed is not None and killed["status"] == "running", killed
            t2 = next(t for t in killed["tasks"] if t["id"] == "T2")
            assert t2["state"] == "running" and alive(t2["pid"]), t2
            # T2's lane outlived the driver: it goes on and ends on its own.
            release.set()
            while alive(t2["pid"]):
                time.sleep(0.05)
            resumed = subprocess.run(
                [*argv, "--resume", "--json"],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
        finally:
            release.set()
    why = resumed.stdout + resumed.stderr + said.read_text() + f"\nasked: {keyed.asked}"
    assert resumed.returncode == 0, why + fake_anthropic.dump_log()
    record = json.loads(resumed.stdout)
    assert [(t["id"], t["state"]) for t in record["tasks"]] == [(t, "merged") for t in ids]
    # T2's lane ran once (not started again on resume), nor did merged T1's: each task's
    # lane asked its three turns, no more.
    assert next(t for t in record["tasks"] if t["id"] == "T2")["attempts"] == 1
    assert {k: len(v) for k, v in keyed.asked.items()} == {component(t): 3 for t in ids}
    assert not keyed.missed, why
    # No commit lost: each task's one commit is on the user's branch.
    log = git(git_repo, "log", "--format=%s", "main").splitlines()
    assert sorted(s for s in log if s.startswith("add ")) == ["add T1", "add T2", "add T3"]
    for t in ids:
        assert (git_repo / f"{t}.txt").read_text() == f"{t}\n"
    assert crashes(ap) == []
