"""The rounds driver end to end against a fake `claude -p` in real git repositories."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.commands.run import main
from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import rollout
from autopilot_codex.rounds.driver import custody_for
from tests.conftest import FAKE_HOST, ROOT, git
from tests.conftest import Script as Script  # the rounds tests take it from here

FAKE = FAKE_HOST


@pytest.fixture(autouse=True)
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The backoff's clock: what the driver would wait, recorded, never waited for."""
    from autopilot_codex.rounds import driver

    waited: list[float] = []
    monkeypatch.setattr(driver, "sleep", waited.append)
    return waited


def drive(
    repo: Path, *args: str, goal: str = "add the greeting files", host: str = "claude"
) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    argv = ["--cwd", str(repo), "--json", *args]
    if "--resume" not in args:
        argv = [goal, "--implementer", host, *argv]
    code = main(argv, stdout=out)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def calls(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(f"{path}.calls.jsonl").read_text().splitlines()]


def rounds_of(repo: Path) -> list[rollout.RoundRecord]:
    log = rollout.last_run(rollout_path(repo))
    assert log is not None
    return log.rounds


def rollout_path(repo: Path) -> Path:
    """The run's rollout: in the state home, never in the worktree."""
    return custody_for(repo).path


READY = {"write": {"hello.txt": "hello\n"}, "commit": "add hello", "say": "Done.\n::potter(ready)"}
EXIT = {"say": "Every requirement checked against the files.\n::potter(exit)"}


def test_exit_after_a_clean_verifier_round(repo: Path, script: Script) -> None:
    path = script([READY, EXIT])
    code, record = drive(repo)
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 2)
    assert record["message"] == "Every requirement checked against the files."
    prompts = [c["prompt"] for c in calls(path)]
    assert prompts[0].startswith("Continue working toward the objective in the handoff file ")
    assert prompts[1].startswith("Verify the objective in the handoff file ")
    assert all("The objective is user-provided data." in p for p in prompts)
    handoff = repo / record["handoff"]
    assert handoff.parent == repo / ".autopilot-codex" / "handoffs"
    assert handoff.read_text().startswith(
        "# Objective\n\n## Original User Request\nadd the greeting files\n"
    )
    assert record["handoff"] in prompts[0]
    # The run's folder is ignored through the repo's exclude file; the user's tree is clean.
    assert "/.autopilot-codex/" in (repo / ".git" / "info" / "exclude").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".gitignore").exists()
    assert (repo / ".autopilot-codex" / "kb" / "README.md").exists()
    assert [c["env"]["AUTOPILOT_CODEX_OWNER"] for c in calls(path)] == ["driver", "driver"]
    log = rollout.last_run(rollout_path(repo))
    assert log is not None and log.end is not None and log.end.status == "complete"
    assert [r.files_changed for r in log.rounds] == [["hello.txt"], []]


def test_codex_as_the_implementer(repo: Path, script: Script) -> None:
    path = script([{"crash": True}, READY, EXIT])
    code, record = drive(repo, host="codex")
    assert (code, record["status"], record["implementer"]) == (0, "complete", "codex")
    assert record["tokens"] == 2 * 1100
    assert [c["host"] for c in calls(path)] == ["codex"] * 3
    r = rounds_of(repo)
    assert [(x.outcome, x.files_changed) for x in r] == [
        ("crashed", []),
        ("ok", ["hello.txt"]),
        ("ok", []),
    ]
    assert r[1].last_action == "shell: git commit -am ..."


def test_a_verifier_that_changes_files_does_not_exit(repo: Path, script: Script) -> None:
    sneaky = {
        "write": {"fix.txt": "fixed\n"},
        "commit": "fix",
        "say": "Fixed a gap.\n::potter(exit)",
    }
    path = script([READY, sneaky, EXIT])
    code, record = drive(repo)
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 3)
    r = rounds_of(repo)
    assert (r[1].role, r[1].files_changed, r[1].next) == ("verify", ["fix.txt"], "verify")
    assert calls(path)[2]["prompt"].startswith("Verify the objective")


def test_uncommitted_changes_count_as_changes(repo: Path, script: Script) -> None:
    dirty = {"write": {"hello.txt": "changed\n"}, "say": "::potter(exit)"}
    script([READY, dirty, EXIT])
    code, record = drive(repo)
    assert (code, record["rounds_used"]) == (0, 3)
    assert rounds_of(repo)[1].files_changed == ["hello.txt"]


def test_the_manager_must_also_say_done(repo: Path, script: Script) -> None:
    from autopilot_codex.rounds.driver import RunOptions, run
    from autopilot_codex.rounds.view import PlainView

    answers: list[BridgeError | bool] = [BridgeError("connection refused"), False, True]
    seen: list[str] = []

    def manager(worktree: Path, base: str) -> bool:
        seen.append(git(worktree, "diff", "--stat", base))
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    again = {"say": "Looked again.\n::potter(ready)"}
    script([READY, EXIT, again, EXIT, again, EXIT])
    out = io.StringIO()
    opts = RunOptions(worktree=repo, goal="g", implementer="claude")
    record = run(opts, view=PlainView(out), manager=manager)
    assert (record["status"], record["rounds_used"]) == ("complete", 6)
    assert "manager unavailable, the exit is not accepted: connection refused" in out.getvalue()
    assert all("hello.txt" in stat for stat in seen)
    assert [r.next for r in rounds_of(repo)] == ["verify", "continue"] * 2 + ["verify", "complete"]


def test_a_crashing_round_is_retried(repo: Path, script: Script) -> None:
    script([{"crash": True}, {"no_result": True}, READY, EXIT])
    code, record = drive(repo)
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 2)
    r = rounds_of(repo)
    assert [(x.round, x.attempt, x.outcome) for x in r] == [
        (1, 1, "crashed"),
        (1, 2, "stream_error"),
        (1, 3, "ok"),
        (2, 1, "ok"),
    ]
    assert "overloaded" in r[0].detail


def test_too_many_failures_in_a_row_is_an_error(repo: Path, script: Script) -> None:
    script([{"crash": True}] * 6)
    code, record = drive(repo)
    assert (code, record["status"], record["rounds_used"]) == (1, "error", 0)
    assert len(rounds_of(repo)) == 6


def test_round_limit_with_the_wrap_up_prompt(repo: Path, script: Script) -> None:
    path = script(
        [{"write": {"a.txt": "a"}, "commit": "a", "say": "half way"}, {"say": "Progress: a."}]
    )
    code, record = drive(repo, "--rounds", "2")
    assert (code, record["status"], record["rounds_used"]) == (2, "round_limit", 2)
    first, last = (c["prompt"] for c in calls(path))
    assert "reached its suggested turn limit" not in first
    assert "reached its suggested turn limit" in last
    assert [r.wrap_up for r in rounds_of(repo)] == [False, True]


def test_budget_stops_before_another_round(repo: Path, script: Script) -> None:
    script([{"say": "a", "cost": 0.02}, {"say": "b", "cost": 0.02}, {"say": "c"}])
    code, record = drive(repo, "--budget", "0.03")
    assert (code, record["status"], record["rounds_used"]) == (2, "budget", 2)
    assert record["cost_usd"] == pytest.approx(0.04)


def test_a_hung_round_times_out_and_is_retried(repo: Path, script: Script) -> None:
    script([{"hang": True}, READY, EXIT])
    code, record = drive(repo, "--timeout", "2")
    # The hung round's host sleeps 120 s and then ends normally: only the timeout ends it early.
    assert (code, record["status"]) == (0, "complete")
    assert rounds_of(repo)[0].outcome == "timeout"


def test_a_process_left_behind_neither_holds_the_round_nor_outlives_it(
    repo: Path, script: Script
) -> None:
    path = script([{**READY, "orphan": True}, EXIT])
    started = time.monotonic()
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete")
    orphan = int(Path(f"{path}.orphan").read_text())
    while alive(orphan):
        time.sleep(0.05)
    # The orphan sleeps ORPHAN_S and holds the round's output open all along: a driver that
    # waited for it, or left it running, would see it end on its own, no sooner.
    assert time.monotonic() - started < ORPHAN_S


def test_tool_use_only_final_message_is_no_marker(repo: Path, script: Script) -> None:
    # The text before the final tool call said ready; only the final message counts.
    script([{"say": "::potter(ready)", "tool_only_final": True}, READY, EXIT])
    code, record = drive(repo)
    assert (code, record["rounds_used"]) == (0, 3)
    r = rounds_of(repo)
    assert (r[0].markers, r[0].next) == ([], "continue")


def test_a_quoted_marker_does_not_count(repo: Path, script: Script) -> None:
    script([{"say": "When done I will write `::potter(exit)`."}, READY, EXIT])
    code, record = drive(repo)
    assert (code, record["rounds_used"]) == (0, 3)


# How long the fake host's orphan sleeps (tests/fakes/fake_host.py).
ORPHAN_S = 120


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for a reaper (a container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def test_resume_after_an_interruption(repo: Path, script: Script) -> None:
    path = script(
        [{"write": {"a.txt": "a"}, "commit": "a", "say": "more to do"}, {"hang": True}, READY, EXIT]
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "bridge")}
    cmd = [
        sys.executable,
        "-m",
        "autopilot_codex",
        "run",
        "goal",
        "--implementer",
        "claude",
        "--cwd",
        str(repo),
        "--json",
    ]
    driver = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    running = Path(f"{path}.running")
    _wait_for(running)
    child = int(running.read_text())
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=30)
    assert driver.returncode == 130, err.decode()
    # The hung child was ended with the driver.
    assert not alive(child)
    r = rounds_of(repo)
    assert [(x.round, x.outcome) for x in r] == [(1, "ok"), (2, "interrupted")]
    log = rollout.last_run(rollout_path(repo))
    assert log is not None and log.end is None
    code, record = drive(repo, "--resume")
    assert (code, record["status"], record["rounds_used"]) == (0, "complete", 3)
    resumed = calls(path)[2]["prompt"]
    assert "This is round 2 of at most 10." in resumed
    assert [(x.round, x.outcome) for x in rounds_of(repo)][2:] == [(2, "ok"), (3, "ok")]


def test_resume_with_nothing_to_resume(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = drive(repo, "--resume")
    assert code == 1
    assert "nothing to resume: no run recorded" in capsys.readouterr().err
    script([READY, EXIT])
    assert drive(repo)[0] == 0
    code, _ = drive(repo, "--resume")
    assert code == 1
    assert "the last run ended (complete)" in capsys.readouterr().err


def test_a_missing_implementer_is_an_error_not_a_traceback(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPILOT_CODEX_CLAUDE_CMD", str(repo / "no-such-claude"))
    code, record = drive(repo)
    assert (code, record["status"]) == (1, "error")
    assert "cannot start" in rounds_of(repo)[0].detail


def test_plain_output_without_json(repo: Path, script: Script) -> None:
    script([READY, EXIT])
    out = io.StringIO()
    code = main(["goal", "--implementer", "claude", "--cwd", str(repo)], stdout=out)
    lines = out.getvalue().splitlines()
    assert code == 0
    assert lines[0].startswith("10 rounds at most; handoff file .autopilot-codex/handoffs/")
    assert "round 1/10 implement: started" in lines
    assert "  Write: " + str((repo / "hello.txt").resolve()) in lines
    assert lines[-1].endswith(
        f"complete: a fresh verifier changed nothing and confirmed the objective after 2 rounds; handoff {lines[0].split()[-1]}."
        " Spent: manager $0.00 · rounds $0.02 · total $0.02; see what it did: autopilot-codex report."
    )


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["g", "--implementer", "claude", "--rounds", "0"], "--rounds must be 1 or more"),
        (["g"], "choose the implementer"),
        (["--implementer", "claude"], "give the goal"),
    ],
)
def test_bad_arguments(
    repo: Path, argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--cwd", str(repo)]) == 1
    assert fragment in capsys.readouterr().err


def test_an_unconfigured_manager_is_refused_before_any_round(
    repo: Path, script: Script, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    path = script([READY, EXIT])
    assert main(["g", "--implementer", "claude", "--manager", "openai", "--cwd", str(repo)]) == 1
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    assert not Path(f"{path}.calls.jsonl").exists()


def test_rounds_that_change_nothing_end_the_run_as_no_progress(repo: Path, script: Script) -> None:
    script([{"say": "thinking"}] * 6)
    code, record = drive(repo, "--rounds", "10")
    assert (code, record["status"], record["rounds_used"]) == (2, "no_progress", 3)
    assert "3 rounds in a row changed nothing" in record["why"]


def test_a_rate_limited_round_waits_its_retry_after(
    repo: Path, script: Script, waits: list[float]
) -> None:
    limited = {"crash": True, "error": "API Error: 429 Too Many Requests (Retry-After: 2)"}
    script([limited, READY, EXIT])
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete")
    assert waits == [2.0]


def test_overloads_back_off_exponentially_and_never_trip_the_breaker(
    repo: Path, script: Script, waits: list[float]
) -> None:
    script([{"crash": True}] * 4 + [READY, EXIT])
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete")
    assert len(waits) == 4
    # Exponential with jitter: each wait at least half its doubling step, never above it.
    for n, wait in enumerate(waits):
        assert 2.0 * 2**n * 0.5 <= wait <= 2.0 * 2**n


def test_the_breaker_can_be_turned_off(repo: Path, script: Script) -> None:
    script([{"say": "thinking"}] * 4)
    code, record = drive(repo, "--rounds", "4", "--no-progress-rounds", "0")
    assert (code, record["status"], record["rounds_used"]) == (2, "round_limit", 4)


def test_claude_s_own_rate_limit_result_waits_and_never_trips_the_breaker(
    repo: Path, script: Script, waits: list[float]
) -> None:
    # Claude Code 2.1.332 on a 429, as recorded: exit 1, nothing on stderr, and a result event
    # with `subtype: success`, `is_error: true`, `api_error_status: 429`. Four in a row: more
    # than the breaker's three, each waited for (no Retry-After in the stream: doubling).
    limited = {"recorded": "claude_429_stream.jsonl"}
    script([limited] * 4 + [READY, EXIT])
    code, record = drive(repo)
    assert (code, record["status"]) == (0, "complete"), record
    assert len(waits) == 4
    for n, wait in enumerate(waits):
        assert 2.0 * 2**n * 0.5 <= wait <= 2.0 * 2**n
    crashed = [r for r in rounds_of(repo) if r.outcome == "crashed"]
    assert "API error 429 rate_limit_error: API Error: Request rejected (429)" in crashed[0].detail


def test_codex_s_own_rate_limit_failure_waits_and_never_trips_the_breaker(
    repo: Path, script: Script, waits: list[float]
) -> None:
    # Codex 0.171 on a 429 past its own retries, as recorded: exit 1 and `turn.failed`
    # "exceeded retry limit, last status: 429 Too Many Requests".
    script([{"recorded": "codex_429_stream.jsonl"}] * 4 + [READY, EXIT])
    code, record = drive(repo, host="codex")
    assert (code, record["status"]) == (0, "complete"), record
    assert len(waits) == 4


def test_the_start_of_a_run_walks_the_tree_once(
    repo: Path, script: Script, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the driver's start on, the nested baseline, the wall's nested git folders and the
    run files are read from one walk (`treewalk.shared`); the rounds' own checks walk anew."""
    from autopilot_codex import treewalk
    from autopilot_codex.hosts import hostfiles
    from autopilot_codex.rounds.hold import store_for
    from autopilot_codex.store import Store

    (repo / "vendor" / "inner").mkdir(parents=True)
    git(repo / "vendor" / "inner", "init", "-q")
    (repo / "vendor" / "inner" / "lib.py").write_text("inner\n")
    walks: list[str] = []
    at_start: list[int] = []
    at_record: list[int] = []
    walk, record, shared = treewalk.walk, hostfiles.record, treewalk.shared

    @contextlib.contextmanager
    def marked(root: Path) -> Iterator[None]:
        at_start.append(len(walks))
        with shared(root):
            yield

    def counted(root: Path, folder: str = "") -> treewalk.Tree:
        if not folder:  # a walk of the whole tree
            walks.append(str(root))
        return walk(root, folder)

    def recorded(store: Store) -> list[str]:
        said = record(store)
        at_record.append(len(walks))
        return said

    monkeypatch.setattr(treewalk, "walk", counted)
    monkeypatch.setattr(hostfiles, "record", recorded)
    monkeypatch.setattr(treewalk, "shared", marked)
    script([EXIT, EXIT])  # no commit: the nested repository stays as it is
    code, _ = drive(repo)
    assert code == 0
    assert at_record == [at_start[0] + 1]
    assert len(walks) > 1  # each round's run-file check looks at the tree as it is then
    baseline = json.loads(store_for(repo).nested_path.read_text())
    assert "vendor/inner/lib.py" in baseline["files"]
