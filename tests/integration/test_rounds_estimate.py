"""A Claude Code round's spend estimated from its stream: each assistant message's usage,
priced by the Claude host's table as the message arrives, watched by the budget, so a round
whose host reports its dollars only in its final event is still stopped as it reaches the
budget. Real git, the scripted fake host (`turns`: assistant messages with usage, no cost)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from autopilot_codex.commands.run import main
from tests.integration.test_rounds_driver import EXIT, READY, Script, drive, rounds_of

# One message of claude-sonnet-4-5 ($3 in, $15 out, $0.30 cache read, $3.75 cache write).
TURN = {
    "input_tokens": 10_000,
    "output_tokens": 2_000,
    "cache_read_input_tokens": 50_000,
    "cache_creation_input_tokens": 4_000,
}
ONE = (10_000 * 3.0 + 2_000 * 15.0 + 50_000 * 0.3 + 4_000 * 3.75) / 1e6


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    from autopilot_codex.rounds import driver

    monkeypatch.setattr(driver, "sleep", lambda _: None)


def test_a_claude_round_is_stopped_as_its_estimate_reaches_the_budget(
    repo: Path, script: Script
) -> None:
    """No running cost in the stream: before, such a round ran on to its end (here it would
    hang); now it is ended at the message whose estimate reaches the budget."""
    assert round(ONE, 6) == 0.09
    script([{"turns": [TURN] * 5, "hang": True}, READY, EXIT])
    code, record = drive(repo, "--budget", "0.20")
    assert (code, record["status"], record["rounds_used"]) == (2, "budget", 0)
    (stopped,) = rounds_of(repo)
    assert (stopped.outcome, stopped.next) == ("budget", "budget")
    # Each message came on two lines of one id: counted once.
    assert stopped.cost_usd == pytest.approx(3 * ONE)
    assert "the budget is used up" in stopped.detail
    # Past the budget by less than one message (5 messages and a hang unwatched).
    assert 0 < record["rounds_usd"] - 0.20 < ONE


def test_control_under_the_budget_the_round_runs_to_its_end(repo: Path, script: Script) -> None:
    script([{**READY, "turns": [TURN] * 2, "cost": 0.2}, EXIT])
    code, record = drive(repo, "--budget", "5")
    assert code == 0
    assert [r.outcome for r in rounds_of(repo)] == ["ok", "ok"]
    # The host's own figure, above the estimate, is the round's cost.
    assert rounds_of(repo)[0].cost_usd == pytest.approx(0.2)
    assert rounds_of(repo)[0].unpriced == ""


def test_a_final_figure_below_the_estimate_never_lowers_the_meter(
    repo: Path, script: Script
) -> None:
    """Attack: the result event says $0 (or less than its messages cost): the round counts
    what its messages were estimated at, and is said to have been watched as it went."""
    script([{**READY, "turns": [TURN] * 2, "cost": 0.0}, EXIT])
    out = io.StringIO()
    argv = ["g", "--implementer", "claude", "--budget", "5", "--cwd", str(repo)]
    assert main(argv, stdout=out) == 0
    assert rounds_of(repo)[0].cost_usd == pytest.approx(2 * ONE)
    assert "report their dollars only as they end" in out.getvalue()  # round 2 streams none
    assert "round 1: claude rounds report their dollars only" not in out.getvalue()


def test_a_model_the_table_does_not_know_is_estimated_at_its_dearest_row_and_said(
    repo: Path, script: Script
) -> None:
    script([{**READY, "turns": [TURN], "model": "claude-nova-9", "cost": 0.0}, EXIT])
    assert drive(repo, "--budget", "5")[0] == 0
    first = rounds_of(repo)[0]
    assert (first.unpriced, (first.cost_usd or 0.0) > ONE) == ("claude-nova-9", True)
    assert rounds_of(repo)[1].unpriced == ""
