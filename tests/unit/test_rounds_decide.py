"""The rounds protocol as a decision table."""

from __future__ import annotations

import pytest

from autopilot_codex.rounds.decide import Next, Progress, RoundFacts, decide, first
from autopilot_codex.rounds.markers import Markers

NONE, READY, EXIT = Markers(), Markers(ready=True), Markers(exit=True)


def facts(
    role: str = "implement",
    markers: Markers = NONE,
    *,
    changed: bool = False,
    outcome: str = "ok",
    manager: bool | None = None,
    wrap_up: bool = False,
) -> RoundFacts:
    return RoundFacts(role, wrap_up, outcome, markers, changed, manager)  # type: ignore[arg-type]


def progress(used: int = 1, rounds: int = 10, failures: int = 0, **extra: object) -> Progress:
    return Progress(used, rounds, failures, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("f", "action", "role"),
    [
        (facts(), "continue", "implement"),
        (facts(markers=READY), "verify", "verify"),
        # exit from a round that was not a verifier is only a candidate.
        (facts(markers=EXIT), "verify", "verify"),
        (facts("verify", EXIT), "complete", "implement"),
        # A verifier that changed files (git says so) has not verified anything.
        (facts("verify", EXIT, changed=True), "verify", "verify"),
        (facts("verify", READY), "verify", "verify"),
        (facts("verify", NONE), "continue", "implement"),
        (facts("verify", EXIT, manager=True), "complete", "implement"),
        (facts("verify", EXIT, manager=False), "continue", "implement"),
        (facts("verify", outcome="crashed"), "retry", "verify"),
        (facts(outcome="interrupted"), "interrupted", "implement"),
        # Stopped at the budget: a retry, which the caps turn into the budget's end.
        (facts("verify", outcome="budget"), "retry", "verify"),
    ],
)
def test_table(f: RoundFacts, action: str, role: str) -> None:
    step = decide(f, progress())
    assert (step.action, step.role) == (action, role)


def test_failures_are_retried_five_times_then_error() -> None:
    for failures in range(1, 6):
        assert decide(facts(outcome="timeout"), progress(0, failures=failures)).action == "retry"
    assert decide(facts(outcome="timeout"), progress(0, failures=6)).action == "error"


def test_a_round_stopped_at_the_budget_is_no_failure_of_the_round() -> None:
    """Not counted towards the failures in a row: `run --resume --budget` goes on with it."""
    assert decide(facts(outcome="budget"), progress(0, failures=6)).action == "retry"


def test_a_retry_keeps_the_wrap_up_of_its_round() -> None:
    step = decide(facts(outcome="crashed", wrap_up=True), progress(9, failures=1))
    assert (step.action, step.wrap_up) == ("retry", True)


def test_the_last_round_is_the_wrap_up() -> None:
    assert decide(facts(), progress(8)).wrap_up is False
    assert decide(facts(), progress(9)) == Next("continue", "work remains", "implement", True)
    assert decide(facts(markers=READY), progress(10)).action == "round_limit"
    # Completion still wins on the last round.
    assert decide(facts("verify", EXIT), progress(10)).action == "complete"


def test_first_round() -> None:
    assert first(10) == Next("continue", "first round", "implement", False)
    assert first(1).wrap_up is True
