"""The user's checks run for real: real git repositories, real commands, real process groups."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from autopilot_codex.checks import run as checks
from autopilot_codex.checks.run import CheckResult, CheckSpec, run_checks
from autopilot_codex.state import Plan, Task
from tests.conftest import PLANTED_KEY, make_repo

# These tests watch a check from outside its work tree (pids, files in tmp_path), which the
# supervisor's sandbox numbers apart or keeps read-only; tests/integration/test_sandbox_checks.py
# runs the same behaviours walled.
pytestmark = pytest.mark.usefixtures("unwalled")

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
RED = "def test_total_is_right():\n    assert 1 + 1 == 3\n"
GREEN = "def test_total_is_right():\n    assert 1 + 1 == 2\n"


def live_members(group: int) -> list[int]:
    """Processes of a group that are not zombies, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == group and fields[0] != b"Z":
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return state[state.rfind(b")") + 2 :].split()[0] != b"Z"


def run(repo: Path, *commands: str, **kwargs: object) -> list[CheckResult]:
    specs = [CheckSpec(c) for c in commands]
    return run_checks(repo, specs, **kwargs)  # type: ignore[arg-type]


def test_a_red_test_fails_and_names_the_failing_test(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"test_sum.py": RED})
    (result,) = run(repo, PYTEST, timeout_s=60)
    assert result.status == "fail" and result.exit_code == 1
    assert "test_total_is_right" in result.tail and "1 failed" in result.tail
    reason = checks.failure_reason([result])
    assert "test_total_is_right" in reason and PYTEST in reason
    assert not checks.passed([result])


def test_a_green_test_passes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"test_sum.py": GREEN})
    (result,) = run(repo, PYTEST, timeout_s=60)
    assert (result.status, result.exit_code) == ("pass", 0)
    assert "1 passed" in result.tail
    assert checks.passed([result]) and checks.failure_reason([result]) == ""
    assert "passed" in checks.evidence_text([result])


def test_an_unchanged_tree_is_not_checked_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"test_sum.py": GREEN, ".gitignore": "*.log\n"})
    counter = tmp_path / "counter"
    # The report (with its timings) lands in the tree, which does not ignore it: the tree the
    # check left is as good as the tree it ran on.
    counting = f"echo run >> {shlex.quote(str(counter))} && {PYTEST} --junitxml=report.xml"
    first = run(repo, counting, timeout_s=60)
    assert (repo / "report.xml").exists()
    again = run(repo, counting, timeout_s=60, previous=first)
    (repo / "debug.log").write_text("ignored files are not the tree\n")
    again = run(repo, counting, timeout_s=60, previous=again)
    assert again == first
    assert counter.read_text().count("run") == 1
    (repo / "test_sum.py").write_text(GREEN + "\n# edited\n")
    edited = run(repo, counting, timeout_s=60, previous=again)
    assert edited != first and counter.read_text().count("run") == 2
    (repo / "new_module.py").write_text("x = 1\n")
    run(repo, counting, timeout_s=60, previous=edited)
    assert counter.read_text().count("run") == 3


def test_changed_checks_are_run_even_on_an_unchanged_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    first = run(repo, "true", timeout_s=10)
    (second,) = run(repo, "false", timeout_s=10, previous=first)
    assert second.status == "fail"


def test_a_hanging_check_is_killed_with_its_whole_group(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    pids = tmp_path / "pids"
    # Without the deadline the check would pass when its sleep ends: "timeout" is the proof,
    # whatever the machine's load made of the 1.5 s.
    hang = f"echo $$ > {pids}; sleep 60 & echo $! >> {pids}; echo started; wait"
    (result,) = run(repo, hang, timeout_s=1.5)
    assert result.status == "timeout" and result.exit_code is None
    assert "1.5 s" in result.note and "started" in result.tail
    leader, child = (int(p) for p in pids.read_text().split())
    assert live_members(leader) == [] and not alive(child)
    assert "TIMED OUT" in checks.failure_reason([result])


def test_a_check_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    pids = tmp_path / "pids"
    (result,) = run(repo, f"trap '' TERM; echo $$ > {pids}; sleep 60; echo never", timeout_s=1)
    # SIGTERM alone would leave the group alive after the grace period: only SIGKILL empties it.
    assert result.status == "timeout" and "never" not in result.tail
    assert live_members(int(pids.read_text())) == []


def test_what_a_finished_check_left_running_is_killed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    pid = tmp_path / "pid"
    # The background process keeps the output pipe open after bash has exited. Waiting for that
    # pipe to close would take the sleep's whole 600 s (and pytest's timeout would end the test).
    # The check waits for the pid to be written: it ends as bash does, and could otherwise
    # kill its leftover before that wrote anything.
    written = f"while [ ! -s {pid} ]; do sleep 0.01; done"
    script = f"sh -c 'echo $$ > {pid}; exec sleep 600' & {written}; echo served"
    (result,) = run(repo, script, timeout_s=900)
    assert result.status == "pass" and result.duration_s < 600
    # Killed, not only left: reaping it is the system's business, so wait for that as long as
    # a loaded machine needs (the sleep itself would outlive the test's timeout).
    while alive(int(pid.read_text())):
        time.sleep(0.05)


def test_a_missing_tool_is_an_error_not_a_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (result,) = run(repo, "no-such-tool-anywhere --run", timeout_s=10)
    assert result.status == "error" and result.exit_code == 127
    assert "command not found" in result.note and "no-such-tool-anywhere" in result.tail
    assert "could NOT run" in checks.failure_reason([result])
    assert not checks.passed([result])


def test_a_check_that_is_not_executable_is_an_error_not_a_failure(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"check.sh": "#!/bin/sh\nexit 0\n"})
    (result,) = run(repo, "./check.sh", timeout_s=60)
    assert result.status == "error" and result.exit_code == 126
    assert result.note == "command not executable (exit 126)"
    assert "could NOT run" in checks.failure_reason([result])


def test_a_check_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    (result,) = run(tmp_path / "gone", "true", timeout_s=10)
    assert result.status == "error" and result.exit_code is None
    assert result.note.startswith("could not start")
    assert result.tree_hash == ""


def test_a_check_that_could_not_run_is_retried(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    counter = tmp_path / "counter"
    command = f"echo run >> {counter}; no-such-tool-anywhere"
    first = run(repo, command, timeout_s=10)
    run(repo, command, timeout_s=10, previous=first)
    assert counter.read_text().count("run") == 2


def test_huge_output_is_bounded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    total = 30 * 1024 * 1024
    (result,) = run(
        repo, f"head -c {total} /dev/zero | tr '\\0' 'x'; echo; seq 1 500", timeout_s=60
    )
    assert result.status == "pass" and result.output_bytes > total
    assert len(result.tail) <= checks.TAIL_CHARS
    assert result.tail.splitlines() == [str(n) for n in range(441, 501)]


def test_one_long_line_is_bounded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (result,) = run(repo, "head -c 5000000 /dev/zero | tr '\\0' 'y'", timeout_s=60)
    assert result.output_bytes == 5_000_000 and len(result.tail) == checks.TAIL_CHARS


def test_the_time_budget_covers_all_checks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    first, second = run(repo, "sleep 30", "echo late", timeout_s=60, budget_s=1)
    assert first.status == "timeout"
    assert second.status == "timeout" and "budget" in second.note and second.tail == ""


@pytest.fixture
def open_stdin() -> Iterator[None]:
    """The bridge's own stdin as a pipe nobody writes to or closes, as a host might leave it."""
    read_end, write_end = os.pipe()
    saved = os.dup(0)
    os.dup2(read_end, 0)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)


@pytest.mark.usefixtures("open_stdin")
def test_checks_are_not_interactive_and_get_only_the_names_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r")
    monkeypatch.setenv("MY_PROJECT_SETTING", "kept")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-1234567890")
    monkeypatch.setenv("MY_OTHER_SETTING", "not listed")
    monkeypatch.setenv("AUTOPILOT_CODEX_REVIEW", "edit")
    (result,) = run(
        repo,
        'read answer; echo "answer=[$answer]"; test ! -t 0 && echo no-tty; env | sort; '
        'test -n "$MY_SERVICE_TOKEN" && echo token-seen',
        timeout_s=60,  # ends at once; the bound is for a wedged shell only
        # `checks_env` in the config; the manager's own names are never passed on.
        env_names=("MY_PROJECT_SETTING", "MY_SERVICE_TOKEN", "OPENAI_API_KEY"),
    )
    assert result.status == "pass" and "answer=[]" in result.tail and "no-tty" in result.tail
    assert "MY_PROJECT_SETTING=kept" in result.tail and "token-seen" in result.tail
    assert "MY_OTHER_SETTING" not in result.tail
    assert PLANTED_KEY not in result.tail and "OPENAI_API_KEY" not in result.tail
    assert "AUTOPILOT_CODEX_" not in result.tail
    # The user's own token reaches the check, but never the text the implementer reads.
    assert "tok-1234567890" not in result.tail and "MY_SERVICE_TOKEN=[REDACTED]" in result.tail


def test_a_plans_tests_are_never_run(tmp_path: Path) -> None:
    """Only the user's specs reach `run_checks`; a task's `tests` are advice.

    Reusable by the Stop-hook wiring: build the loop from this plan with no check configured,
    reach a Stop, and assert the canary still does not exist.
    """
    repo = make_repo(tmp_path / "r")
    canary = tmp_path / "canary"
    plan = Plan("s", [Task("T1", "t", [], [], [], [f"touch {canary}", "rm -rf ~"])])
    assert plan.tasks[0].tests  # the plan does carry commands
    assert run_checks(repo, checks.specs_from_config(None), timeout_s=10) == []
    user = checks.specs_from_config(["true"])
    assert [r.command for r in run_checks(repo, user, timeout_s=10)] == ["true"]
    assert not canary.exists()


def test_the_users_index_is_not_touched(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    (repo / "a.py").write_text("a = 2\n")
    os.utime(repo / "a.py", (1, 1))
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    run(repo, "true", timeout_s=10)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


@pytest.mark.parametrize(
    ("tail", "limit", "status"), [("sleep 60", 1.5, "timeout"), ("exit 3", 60, "fail")]
)
def test_a_check_that_closes_its_output_is_still_timed_and_judged(
    tmp_path: Path, tail: str, limit: float, status: str
) -> None:
    repo = make_repo(tmp_path / "r")
    pids = tmp_path / "pids"
    script = f"echo $$ > {pids}; echo said; exec >/dev/null 2>&1; {tail}"
    (result,) = run(repo, script, timeout_s=limit)
    assert result.status == status
    if status == "fail":
        assert result.exit_code == 3 and "said" in result.tail
    else:
        assert result.exit_code is None
    assert live_members(int(pids.read_text())) == []


def test_a_check_whose_background_child_keeps_writing_ends_with_bash(tmp_path: Path) -> None:
    """`server & run-tests` where the server logs on: the check is over when bash is, not at
    its time limit (the budget of every check after it), and the server goes with its group."""
    repo = make_repo(tmp_path / "r")
    pids = tmp_path / "pids"
    ticker = f"(while :; do echo tick; sleep 0.05; done) & echo $$ > {pids}; echo served"
    # Without the end of bash being noticed, this check would run its whole 900 s.
    (result,) = run(repo, ticker, timeout_s=900)
    assert result.status == "pass" and result.exit_code == 0
    assert "served" in result.tail and result.duration_s < 600
    assert live_members(int(pids.read_text())) == []


def test_a_check_whose_daemon_left_its_group_still_ends(tmp_path: Path) -> None:
    """A daemon in a session of its own is beyond the group kill and holds the output pipe
    open, writing: the check still ends with bash, and what the daemon writes is not awaited."""
    repo = make_repo(tmp_path / "r")
    pid = tmp_path / "pid"
    daemon = f"setsid sh -c 'echo $$ > {pid}; while :; do echo tick; sleep 0.05; done' &"
    try:
        written = f"while [ ! -s {pid} ]; do sleep 0.01; done"
        (result,) = run(repo, f"{daemon} {written}; echo served", timeout_s=900)
        assert result.status == "pass" and result.exit_code == 0
        assert "served" in result.tail and result.duration_s < 600
    finally:
        if pid.exists():
            os.kill(int(pid.read_text()), 9)
