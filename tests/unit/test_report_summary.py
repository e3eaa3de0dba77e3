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
    loop = files({"style": "rounds", "status": "stopped_budget"}, rollout=rollout)
    got = build(loop)
    assert got.spend.budget is None and got.spend.total_text() == "$0.02"  # never "of $5.00"
    assert (got.iterations, got.tokens, got.elapsed) == ("1/10 rounds", 500, "30s")
    assert got.next_command == "autopilot-codex run --resume"
    assert got.banner == ("bad", "The loop stopped at its budget.")
    assert build(files({"style": "rounds", "status": "done"}, rollout=rollout)).next_command == (
        "autopilot-codex run <goal>"
    )


def test_a_paused_loop_waits_for_its_user() -> None:
    got = build(files({"style": "autopilot", "status": "paused", "started_epoch": NOW - 5}))
    assert got.banner == ("warn", "The loop is paused: it waits for you.")
    assert got.next_command == "autopilot-codex resume" and got.elapsed == "5s"
    # An ended loop with no readable time in its ledger reads to now.
    assert build(files({"status": "aborted", "started_epoch": NOW - 7})).elapsed == "7s"
    assert summary.build(files({}), Spend(0, 0)).elapsed == "0s"
