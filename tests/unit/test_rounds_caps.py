"""A run's caps as a table: which cap ends it before the next round, and which raises
`run --resume` accepts after a run ended at one."""

from __future__ import annotations

from typing import Any

import pytest

from autopilot_codex.errors import BridgeError
from autopilot_codex.rounds import caps, rollout

START = 1_800_000_000.0


def header(**fields: Any) -> rollout.RunHeader:
    base: dict[str, Any] = {
        "kind": "run",
        "run": "r1",
        "goal": "g",
        "implementer": "codex",
        "rounds": 3,
        "handoff": "h.md",
        "base_sha": "b",
        "started": START,
    }
    return rollout.RunHeader(**{**base, **fields})


def round_(
    n: int, cost: float = 0.1, tokens: int = 1000, manager: float = 0.0
) -> rollout.RoundRecord:
    return rollout.RoundRecord(
        kind="round", run="r1", round=n, attempt=1, role="implement", wrap_up=False,
        start=START, end=START, outcome="ok", exit_code=0, markers=[], files_changed=["a"],
        cost_usd=cost, tokens=tokens, last_action="", message="", next="continue",
        manager_usd=manager,
    )  # fmt: skip


def log(end: str | None = None, **fields: Any) -> rollout.RunLog:
    ended = rollout.RunEnd(kind="end", run="r1", status=end, end=START + 60) if end else None
    return rollout.RunLog(header(**fields), [round_(1), round_(2, manager=0.05)], ended)


@pytest.mark.parametrize(
    ("fields", "now", "action", "words"),
    [
        ({"budget_usd": 0.25}, START, "budget", "budget used up by total: $0.25 of $0.25"),
        ({"budget_usd": 0.1}, START, "budget", "by rounds spend"),
        ({"budget_usd": 0.26}, START, None, ""),
        ({"max_tokens": 2000}, START, "tokens", "2000 of 2000 tokens (0 over)"),
        ({"max_seconds": 60.0}, START + 75, "duration", "1m15s of 1m (15s over)"),
        ({"max_seconds": 60.0}, START + 59, None, ""),
    ],
)
def test_which_cap_ends_a_run(
    fields: dict[str, Any], now: float, action: str | None, words: str
) -> None:
    got = caps.capped(caps.of_log(log(**fields), now))
    if action is None:
        assert got is None
    else:
        assert got is not None and got.action == action and words in got.why, got


def test_the_manager_and_the_rounds_are_two_meters_of_one_total() -> None:
    r = caps.of_log(log(), START)
    assert r.implementer_usd == pytest.approx(0.2)
    assert (r.manager_usd, r.tokens) == (0.05, 2000)


@pytest.mark.parametrize(
    ("end", "given", "error"),
    [
        ("round_limit", caps.Raise(), "raise it to go on: run --resume --rounds N"),
        ("round_limit", caps.Raise(budget_usd=9.0), "--resume --rounds N"),
        ("round_limit", caps.Raise(rounds=2), "--rounds 2: the run has used 2; give more"),
        ("budget", caps.Raise(rounds=9), "--resume --budget USD"),
        ("budget", caps.Raise(budget_usd=0.25), "the run has spent $0.25"),
        ("tokens", caps.Raise(max_tokens=1500), "the rounds have used 2000"),
        ("duration", caps.Raise(max_seconds=30.0), "the run started 1m ago"),
        ("complete", caps.Raise(rounds=9), "nothing to resume: the last run ended (complete)"),
        ("no_progress", caps.Raise(), "the last run ended (no_progress)"),
    ],
)
def test_a_raise_that_does_not_lift_the_cap_is_refused(
    end: str, given: caps.Raise, error: str
) -> None:
    with pytest.raises(BridgeError) as refused:
        caps.raise_record(log(end), given, START + 60)
    assert error in str(refused.value)


def test_a_raise_reopens_the_run_with_the_new_caps() -> None:
    ended = log("round_limit", budget_usd=1.0)
    record = caps.raise_record(ended, caps.Raise(rounds=5, max_tokens=0), START + 60)
    assert record is not None
    ended.raised(record)
    assert (ended.end, ended.header.rounds, ended.header.budget_usd) == (None, 5, 1.0)
    assert ended.header.max_tokens == 0
    assert caps.raise_record(log(), caps.Raise(), START) is None  # an interrupted run, no raise
