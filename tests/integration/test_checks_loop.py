"""The user's checks inside a loop: real repositories, real commands, real hooks, the fake manager.

A red check overrules `done` and a task advance; green lets `done` through; an unchanged tree is
not checked again; a hanging check is stopped at its limit; a plan's `tests` never run.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.paths import project_dir
from tests.conftest import (
    Hook,
    cli,
    git,
    make_repo,
    payload,
    plan_body,
    state_of,
    task,
    verdict_body,
)
from tests.fakes.openai_server import FakeOpenAI

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
RED = "def test_total_is_right():\n    assert 1 + 1 == 3\n"
GREEN = "def test_total_is_right():\n    assert 1 + 1 == 2\n"


def plan(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    body: Any = None,
) -> str:
    manager.enqueue(body or plan_body(2), schema="Plan")
    # These tests are about the checks at a verdict: the diff reviews are left out of them.
    args = ["-C", str(repo), "plan", "--session-id", "sess-1", "--review", "off", *extra]
    code, out = cli(capsys, *args, "do it")
    assert code == 0, out
    return out


def stop(hook: Hook, repo: Path, message: str = "All tests pass.") -> dict[str, Any]:
    return hook("Stop", payload("Stop", repo, last_assistant_message=message)).json


def events_of(repo: Path, name: str) -> list[dict[str, Any]]:
    lines = (project_dir(repo) / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("event") == name]


@pytest.fixture
def red_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"test_calc.py": RED})


def test_a_red_check_overrules_done_and_green_lets_it_through(
    red_repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    out = plan(red_repo, manager, capsys, "--check", PYTEST)
    assert "Checks run by the bridge before it believes done" in out
    assert state_of(red_repo)["checks"] == [{"command": PYTEST, "timeout_s": None}]

    manager.enqueue(verdict_body("done"), schema="Verdict")
    answer = stop(hook, red_repo)
    assert answer["decision"] == "block"
    assert "test_total_is_right" in answer["reason"]
    assert PYTEST in answer["reason"] and "FAILED" in answer["reason"]
    state = state_of(red_repo)
    assert (
        state["status"],
        state["autopilot"]["current_task"],
        state["autopilot"]["completed_tasks"],
    ) == (
        "running",
        "T1",
        [],
    )
    assert state["last_checks"][0]["status"] == "fail"
    assert events_of(red_repo, "checks.overrule")
    assert len(events_of(red_repo, "checks.run")) == 1
    # The manager saw the evidence, framed as data.
    prompt = manager.requests_for(schema="Verdict")[0].prompt_text
    assert "<<<DATA CHECKS" in prompt and "test_total_is_right" in prompt

    (red_repo / "test_calc.py").write_text(GREEN)
    git(red_repo, "commit", "-qam", "fix the sum")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    answer = stop(hook, red_repo)
    assert "decision" not in answer
    assert state_of(red_repo)["status"] == "done"
    assert state_of(red_repo)["last_checks"][0]["status"] == "pass"
    assert len(events_of(red_repo, "checks.run")) == 2


def test_a_red_check_keeps_the_task_current(
    red_repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    plan(red_repo, manager, capsys, "--check", PYTEST)
    (red_repo / "file1.txt").write_text("one\n")
    git(red_repo, "add", "-A")
    git(red_repo, "commit", "-qm", "T1")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    answer = stop(hook, red_repo)
    assert answer["decision"] == "block" and "test_total_is_right" in answer["reason"]
    state = state_of(red_repo)
    assert (state["autopilot"]["current_task"], state["autopilot"]["completed_tasks"]) == ("T1", [])
    assert events_of(red_repo, "checks.overrule")[0]["note"].endswith("task advance")


def test_an_unchanged_tree_is_not_checked_again(
    repo: Path,
    manager: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    hook: Hook,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Three blocks without a commit would end the loop (the no-progress guard) before the last.
    monkeypatch.setenv("AUTOPILOT_CODEX_NO_PROGRESS_LIMIT", "10")
    # In the git directory: a walled check writes the work tree, not tmp_path.
    counter = repo / ".git" / "runs"
    check = f"echo run >> {shlex.quote(str(counter))}; exit 1"
    plan(repo, manager, capsys, "--check", check)
    for _ in range(2):
        manager.enqueue(verdict_body("done"), schema="Verdict")
        assert stop(hook, repo)["decision"] == "block"
    assert counter.read_text().count("run") == 1
    assert len(events_of(repo, "checks.run")) == 1
    # The cached result still overrules: an unchanged red tree is still red.
    assert len(events_of(repo, "checks.overrule")) == 2
    (repo / "new.txt").write_text("changed\n")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    assert stop(hook, repo)["decision"] == "block"
    assert counter.read_text().count("run") == 2


def test_a_hanging_check_is_stopped_at_its_limit_and_reported(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook, isolated: Path
) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(
        json.dumps({"checks": [{"command": "sleep 60", "timeout_s": 1}]})
    )
    plan(repo, manager, capsys)
    manager.enqueue(verdict_body("done"), schema="Verdict")
    answer = stop(hook, repo)
    # Not the sleep's own end: that would have been a pass, not a timeout.
    assert answer["decision"] == "block"
    assert "`sleep 60` TIMED OUT" in answer["reason"]
    assert state_of(repo)["last_checks"][0]["status"] == "timeout"


def test_a_check_that_cannot_run_is_a_block_that_counts_towards_the_guards(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    plan(repo, manager, capsys, "--check", "no-such-tool-here --run")
    reasons = []
    for _ in range(3):
        manager.enqueue(verdict_body("done"), schema="Verdict")
        reasons.append(stop(hook, repo))
    assert "could NOT run" in reasons[0]["reason"]
    # No commit between the blocks: the no-progress guard ends the loop, never a wedge.
    assert state_of(repo)["status"] in ("aborted", "paused")
    assert "decision" not in reasons[-1]


def test_a_plans_tests_are_never_run(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook, tmp_path: Path
) -> None:
    marker = tmp_path / "user-home" / "MARKER"
    body = {
        "summary": "plan",
        "tasks": [
            task(1, tests=["rm -rf ~", f"touch {marker}"]),
            task(2, tests=[f"touch {marker}"]),
        ],
    }
    plan(repo, manager, capsys, body=body)
    (repo / "file1.txt").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "T1")
    manager.enqueue(verdict_body("continue", done=True), schema="Verdict")
    manager.enqueue(verdict_body("done"), schema="Verdict")
    stop(hook, repo)
    stop(hook, repo)
    assert state_of(repo)["status"] == "done"
    assert not marker.exists()
    assert events_of(repo, "checks.run") == []


def test_plan_proposes_a_detected_check_and_does_not_run_it(
    tmp_path: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    marker = tmp_path / "MARKER"
    repo = make_repo(tmp_path / "repo", {"Makefile": f"test:\n\ttouch {marker}\n"})
    out = plan(repo, manager, capsys)
    assert "to make the loop run it before believing done: --check 'make test'" in out
    assert state_of(repo)["checks"] == []
    manager.enqueue(verdict_body("done"), schema="Verdict")
    stop(hook, repo)
    assert state_of(repo)["status"] == "done"
    assert not marker.exists()


def test_status_shows_the_last_check_run(
    red_repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    plan(red_repo, manager, capsys, "--check", PYTEST)
    code, out = cli(capsys, "-C", str(red_repo), "status")
    assert f"`{PYTEST}`" in out and "not run yet" in out
    manager.enqueue(verdict_body("done"), schema="Verdict")
    stop(hook, red_repo)
    code, out = cli(capsys, "-C", str(red_repo), "status")
    line = next(x for x in out.splitlines() if x.startswith("Check: "))
    assert PYTEST in line and "FAILED, exit 1 in" in line and " s at 20" in line


def test_a_bad_checks_setting_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], isolated: Path
) -> None:
    isolated.mkdir(parents=True, exist_ok=True)
    (isolated / "config.json").write_text(json.dumps({"checks": [{"command": ""}]}))
    code, out = cli(capsys, "-C", str(repo), "plan", "--session-id", "s", "do it")
    assert code == 1 and "checks" in out and "non-empty" in out


# -- ralph ------------------------------------------------------------------------------------


def test_ralph_accepts_a_promise_only_on_green_checks(
    red_repo: Path, capsys: pytest.CaptureFixture[str], hook: Hook
) -> None:
    code, out = cli(
        capsys,
        "-C",
        str(red_repo),
        "ralph",
        "--completion-promise",
        "ALL GREEN",
        "--check",
        PYTEST,
        "--session-id",
        "sess-1",
        "Make the tests pass.",
    )
    assert code == 0 and "only when these checks pass" in out
    promise = "Done.\n<promise>ALL GREEN</promise>"
    answer = stop(hook, red_repo, promise)
    assert answer["decision"] == "block"
    assert "promise is not accepted" in answer["reason"]
    assert "test_total_is_right" in answer["reason"]
    assert state_of(red_repo)["status"] == "running"
    # No promise, no check run: the checks decide whether a promise is true, nothing else.
    (red_repo / "test_calc.py").write_text(GREEN)
    assert stop(hook, red_repo, "still going")["decision"] == "block"
    assert len(events_of(red_repo, "checks.run")) == 1
    answer = stop(hook, red_repo, promise)
    assert "decision" not in answer and "promise kept" in answer["systemMessage"]
    assert state_of(red_repo)["status"] == "done"
    code, out = cli(capsys, "-C", str(red_repo), "status")
    assert "Check: " in out and "passed" in out


def test_a_stop_typed_during_a_long_check_is_not_kept_waiting(
    repo: Path, manager: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    from tests.conftest import LAUNCHER

    # The Stop lets its check finish; 20 s is far longer than a `stop` takes on a loaded machine.
    # In the git directory: a walled check writes the work tree, not tmp_path.
    started, finished = repo / ".git" / "check-started", repo / ".git" / "check-finished"
    plan(repo, manager, capsys, "--check", f"touch {started}; sleep 20; touch {finished}")
    (repo / "file1.txt").write_text("one\n")
    env = {
        **os.environ,
        "AUTOPILOT_CODEX_PYTHON": sys.executable,
        "AUTOPILOT_CODEX_LOCK_TIMEOUT_S": "1",
    }
    stdin = repo.parent / "stop-payload.json"
    stdin.write_text(json.dumps(payload("Stop", repo)))
    with stdin.open("rb") as handle:
        stop_hook = subprocess.Popen(
            [str(LAUNCHER), "hook", "Stop", "--host", "claude"],
            stdin=handle,
            stdout=subprocess.PIPE,
            env=env,
        )
    while not started.exists():  # the check is running now
        assert stop_hook.poll() is None, "the Stop hook ended before its check started"
        time.sleep(0.05)
    code, out = cli(capsys, "-C", str(repo), "stop", "user says stop")
    assert code == 0 and "stopped" in out, out
    # The check was still running when the stop answered: it did not wait for the check.
    assert not finished.exists()
    answer, _ = stop_hook.communicate(timeout=120)
    # The Stop sees the user's stop and lets the host go: no verdict was asked for.
    assert b'"decision": "block"' not in answer
    assert state_of(repo)["status"] == "stopped"
    assert manager.requests_for(schema="Verdict") == []
