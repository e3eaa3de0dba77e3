"""The checks' lines in `status` and their quoted output: what a user and the manager read."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex import typedjson
from autopilot_codex.checks import proc as checks_proc
from autopilot_codex.checks import run as checks
from autopilot_codex.checks.run import CheckResult, CheckSpec
from autopilot_codex.checks.watch import Watch
from tests.conftest import make_repo
from tests.unit.test_reducer import make_state


def result(**changes: object) -> CheckResult:
    base = CheckResult(
        command="pytest -q",
        exit_code=1,
        status="fail",
        duration_s=1.25,
        tail="1 failed",
        output_bytes=9,
        note="",
        started_at="2026-01-01T00:00:00+00:00",
        tree_hash="a" * 64,
        tree_hash_after="b" * 64,
    )
    return typedjson.load(CheckResult, {**typedjson.dump(base), **changes})


def test_status_names_the_checks_not_run_yet_and_says_nothing_without_checks() -> None:
    assert checks.status_lines(make_state()) == []
    specs = [CheckSpec("pytest -q", 30.0), CheckSpec("ruff check", 30.0)]
    assert checks.status_lines(make_state(checks=specs)) == [
        "Checks: `pytest -q`, `ruff check` (not run yet)"
    ]
    assert checks.status_lines(make_state(checks=specs, last_checks=[result()])) == [
        "Check: `pytest -q` FAILED, exit 1 in 1.2 s at 2026-01-01T00:00:00+00:00"
    ]


def test_a_status_line_carries_the_note_only_when_there_is_one() -> None:
    assert checks.status_line(result(note="command not found")).endswith(
        "at 2026-01-01T00:00:00+00:00 (command not found)"
    )
    assert checks.status_line(result()).endswith("at 2026-01-01T00:00:00+00:00")


def test_whole_output_is_quoted_as_output_and_a_cut_one_says_how_much_was_kept() -> None:
    whole = checks.failure_reason([result(tail="E one\nE two", output_bytes=12)])
    assert "  output:\n  | E one\n  | E two" in whole
    lines = "\n".join(f"line {n}" for n in range(100))
    cut = checks.failure_reason([result(tail=lines, output_bytes=len(lines) + 1)])
    assert f"  last 60 lines of {len(lines) + 1} bytes of output:\n  | line 40\n" in cut
    longer = checks.failure_reason([result(tail="E two", output_bytes=500)])
    assert "  last 1 lines of 500 bytes of output:\n  | E two" in longer


def test_a_secret_that_contains_another_is_redacted_whole() -> None:
    redact = checks._redactor({"SHORT_TOKEN": "abcdefgh", "LONG_TOKEN": "abcdefgh12345678"})
    assert redact("token=abcdefgh12345678 and abcdefgh") == "token=[REDACTED] and [REDACTED]"


def test_a_timed_out_check_names_its_limit_to_a_tenth_of_a_second() -> None:
    outcome = checks_proc.Outcome(None, b"", 0, 2.25, 2.25, timed_out=True)
    assert checks._judge(outcome) == ("timeout", "stopped after 2.2 s, its time limit")


def test_a_spent_budget_reports_the_check_as_a_timeout_not_a_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (result_,) = checks.run_checks(repo, [CheckSpec("true", 30.0)], budget_s=0.0)
    assert (result_.status, result_.note) == (
        "timeout",
        "not started: the checks' time budget was spent",
    )


@pytest.mark.usefixtures("unwalled")  # walled, the write itself fails (test_sandbox_checks)
def test_a_check_that_changes_a_watched_file_fails_whatever_its_exit_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    watched = tmp_path / "state.json"
    watched.write_text("{}")
    watch = Watch([watched])
    (changed, kept) = checks.run_checks(
        repo,
        [CheckSpec(f"echo '{{\"done\": true}}' > {watched}", 30.0), CheckSpec("true", 30.0)],
        watch=watch,
    )
    assert (changed.status, kept.status) == ("fail", "pass")
    assert "it changed the loop's own state.json: tampering" in changed.note
    assert watched.read_text() == "{}"


def test_the_readme_gives_the_checks_default_time_limit() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"time limit (default {checks.DEFAULT_TIMEOUT_S:g} s" in readme


def test_a_check_s_duration_is_kept_to_the_millisecond() -> None:
    """The stored record holds milliseconds, as the ralph and rounds records do."""
    outcome = checks_proc.Outcome(0, b"ok\n", 3, 1.23456, 30.0)
    item = CheckSpec("true", 30.0)
    kept = checks._result(item, "2026-01-01T00:00:00+00:00", outcome, checks._Redact([]), "a", "a")
    assert kept.duration_s == 1.235
