"""The report's summary strip and banner, read from a loop's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autopilot_codex.loopfiles import LoopFiles
from autopilot_codex.report import summary
from autopilot_codex.spend import Spend, of_files

NOW = 1_800_000_000.0


def files(
    state: dict[str, Any],
    *,
    plan: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    rollout: list[dict[str, Any]] | None = None,
) -> LoopFiles:
    return LoopFiles(Path("/nowhere"), state, plan or {}, events or [], rollout or [], {})


def build(loop: LoopFiles) -> summary.Summary:
    return summary.build(loop, of_files(loop), NOW)


def test_an_autopilot_loop_done_with_tasks_open() -> None:
    loop = files(
        {"style": "autopilot", "status": "done", "started_epoch": NOW - 40, "iteration": 3,
         "max_iterations": 30, "completed_tasks": ["T1"], "implementer_tokens": 1200,
         "budget_usd": 5.0, "budget_used_usd": 0.5},
        plan={"tasks": [{"id": "T1"}, {"id": "T2"}]},
        events=[{"ts": "2027-01-15T07:59:24+00:00"}, {"ts": "garbled"}],
    )  # fmt: skip
    got = build(loop)
    assert (got.tokens, got.iterations, got.tasks) == (1200, "3/30", "1/2")
    assert got.elapsed == "4s"  # to its last event, not to now
    assert got.next_command == "autopilot-codex plan <goal>"
    assert got.banner == ("warn", "Done with tasks open: 1 of 2 not done.")
    assert got.spend.total_text() == "$0.50 of $5.00"


def test_a_running_ralph_loop_counts_to_now_and_has_no_banner() -> None:
    loop = files({"style": "ralph", "status": "running", "started_epoch": NOW - 90, "iteration": 2})
    got = build(loop)
    assert (got.elapsed, got.iterations, got.tasks, got.banner) == ("1m30s", "2/∞", "", None)
    assert got.next_command == "autopilot-codex status"
    done = build(files({"style": "ralph", "status": "done"}))
    assert done.next_command == "autopilot-codex ralph <prompt>" and done.elapsed == "0s"


def test_a_rounds_run_without_a_budget_says_no_budget() -> None:
    rollout: list[dict[str, Any]] = [
        {"kind": "run", "run": "r", "rounds": 10, "started": NOW - 60, "budget_usd": None},
        {"kind": "round", "run": "r", "outcome": "ok", "tokens": 500, "cost_usd": 0.02},
        {"kind": "round", "run": "r", "outcome": "crashed", "tokens": None},
        {"kind": "end", "run": "r", "status": "budget", "end": NOW - 30},
    ]
    loop = files({"style": "rounds", "run_id": "r", "status": "stopped_budget"}, rollout=rollout)
    got = build(loop)
    assert got.spend.budget is None and got.spend.total_text() == "$0.02"  # never "of $5.00"
    assert (got.iterations, got.tokens, got.elapsed) == ("1/10 rounds", 500, "30s")
    assert got.next_command == "autopilot-codex run --resume"
    assert got.banner == ("bad", "The loop stopped at its budget.")
    assert build(
        files({"style": "rounds", "run_id": "r", "status": "done"}, rollout=rollout)
    ).next_command == ("autopilot-codex run <goal>")


def test_a_paused_loop_waits_for_its_user() -> None:
    got = build(files({"style": "autopilot", "status": "paused", "started_epoch": NOW - 5}))
    assert got.banner == ("warn", "The loop is paused: it waits for you.")
    assert got.next_command == "autopilot-codex resume" and got.elapsed == "5s"
    # An ended loop with no readable time in its ledger reads to now.
    assert build(files({"status": "aborted", "started_epoch": NOW - 7})).elapsed == "7s"
    assert summary.build(files({}), Spend(0, 0)).elapsed == "0s"


def test_the_timeline_speaks_plainly_and_keeps_what_failed() -> None:
    from autopilot_codex.report import timeline

    events = [
        {"ts": "2027-01-15T08:00:00+00:00", "event": "verdict.continue", "decision": "block",
         "reason": "Task T1 accepted. Next: T2."},
        {"ts": "2027-01-15T08:00:01+00:00", "event": "checks.run", "status": "fail",
         "command": "pytest", "tail": "E   assert 1 == 2"},
        {"ts": "2027-01-15T08:00:02+00:00", "event": "checks.run", "status": "pass",
         "command": "pytest", "tail": "1 passed"},
    ]  # fmt: skip
    rollout: list[dict[str, Any]] = [
        {"kind": "run", "run": "r"},
        {"kind": "round", "run": "r", "round": 2, "attempt": 3, "role": "implement",
         "outcome": "crashed", "exit_code": 1, "detail": "", "next": "retry", "end": NOW},
        {"kind": "round", "run": "r", "round": 3, "attempt": 1, "role": "implement",
         "outcome": "timeout", "detail": "no output for 600s", "next": "retry", "end": NOW},
    ]  # fmt: skip
    entries = timeline.build(files({}, events=events, rollout=rollout))
    titles = [e.title for e in entries]
    assert "manager: continue — T1 accepted" in titles
    # Each check run keeps its own output: the red one's is not the green one's.
    assert [e.tail for e in entries if e.kind == "check"] == ["E   assert 1 == 2", "1 passed"]
    crashed, slow = [e for e in entries if e.kind == "round"]
    assert crashed.title == "round 2 (implement, attempt 3): crashed → retry"
    assert crashed.detail.startswith("cause: crashed, exit code 1")
    assert slow.detail.startswith("cause: no output for 600s")
