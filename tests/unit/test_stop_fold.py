"""The folded Stop's decision matrix (issue 26): one answer with a review part and a verdict
part, applied as the two calls' answers were. The review part decides first, through the
finding ledger; the verdict part counts only when the review lets the turn end; the call is
charged once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.manager import Outcome
from autopilot_codex.manager.schemas import Judgement, Review, Verdict
from autopilot_codex.state import State
from autopilot_codex.styles.autopilot.fold import apply_folded
from autopilot_codex.styles.autopilot.record import of
from tests.conftest import review_body, verdict_body
from tests.unit.test_autopilot_stop import planted

NOW = "2026-12-01T00:00:00+00:00"
COST = 0.3


def judgement(review: str, verdict: str, done: bool = False) -> Outcome[Judgement]:
    extra: dict[str, Any] = {"revert_files": ["file1.txt"]} if review == "reject" else {}
    value = Judgement(
        review=Review.model_validate(review_body(review, **extra)),
        verdict=Verdict.model_validate(verdict_body(verdict, done=done)),
    )
    return Outcome(value, cost_usd=COST)


def folded(tmp_path: Path, outcome: Outcome[Any]) -> tuple[State, Any, list[str]]:
    context, store = planted(tmp_path, None)
    state = store.load()
    assert state is not None
    before = [e["event"] for e in store.tail_events(50)]
    with store.locked():
        state, decision = apply_folded(
            context,
            state,
            outcome,
            "key1",
            ("file1.txt",),
            "head1",
            context.limits,
            now=NOW,
            checks_red="",
        )
    events = [e["event"] for e in store.tail_events(50)][len(before) :]
    return state, decision, events


@pytest.mark.parametrize(
    ("review", "verdict", "event", "status", "blocks"),
    [
        ("approve", "done", "verdict.done", "done", False),
        ("approve", "continue", "verdict.continue", "running", True),
        ("approve", "abort", "verdict.abort", "aborted", False),
        # A blocking review is the Stop's answer: the verdict part is never applied.
        ("fix", "done", "review.fix", "running", True),
        ("fix", "continue", "review.fix", "running", True),
        ("reject", "done", "review.reject", "running", True),
    ],
)
def test_the_review_part_decides_first_and_the_call_is_charged_once(
    tmp_path: Path, review: str, verdict: str, event: str, status: str, blocks: bool
) -> None:
    state, decision, events = folded(tmp_path, judgement(review, verdict))
    assert (decision.event, state.status, decision.blocks) == (event, status, blocks)
    assert state.budget_used_usd == pytest.approx(COST)
    assert (kept := of(state).last_review) is not None and kept.decision == review
    assert of(state).cached_review("key1") is not None
    # One turn either way: the verdict's, or the review's block (issue 23).
    assert state.iteration == 1
    if review == "approve":
        assert (said := of(state).last_verdict) is not None and said.decision == verdict
        # The review's own line is written; the verdict's is the caller's, with the cost.
        assert events == ["review.approve"]
    else:
        assert of(state).last_verdict is None and events == []


def test_a_folded_call_that_failed_is_a_failed_review(tmp_path: Path) -> None:
    outcome: Outcome[Any] = Outcome(None, cost_usd=0.05, error="timed out")
    state, decision, _ = folded(tmp_path, outcome)
    assert decision.event == "review.unavailable" and not decision.blocks
    assert state.status == "paused" and "timed out" in (state.stop_reason or "")
    assert state.budget_used_usd == pytest.approx(0.05)
    assert of(state).last_verdict is None and of(state).cached_review("key1") is None


def test_a_folded_continue_that_completes_the_task_needs_its_commit(tmp_path: Path) -> None:
    """The verdict part is held to the same rules as a verdict alone: the manager's word
    does not move a task on without a commit since the task began."""
    state, decision, _ = folded(tmp_path, judgement("approve", "continue", done=True))
    assert decision.event == "verdict.continue"
    # planted()'s task began at "b", the head is "head1": a new commit, the task advances.
    assert of(state).completed_tasks == ["T1"]
