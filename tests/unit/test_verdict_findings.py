"""A continue verdict's findings reach the implementer in the Stop's block text."""

from __future__ import annotations

from autopilot_codex.manager import Outcome
from autopilot_codex.manager.schemas import Finding, Verdict
from autopilot_codex.styles.autopilot import reducer
from tests.unit.test_reducer import LIMITS, NOW, make_state


def test_a_continue_verdicts_findings_are_in_the_block() -> None:
    finding = Finding(
        severity="high",
        file="src/total.py",
        line_start=3,
        line_end=4,
        title="the total drops the last item",
        recommendation="iterate over the whole list",
    )
    value = Verdict(
        decision="continue",
        reason="why",
        current_task_done=False,
        instructions="do it",
        findings=[finding],
    )
    _, decision = reducer.apply_verdict(
        make_state(), Outcome(value, cost_usd=0.25), "head1", LIMITS, now=NOW
    )
    assert decision.blocks
    assert "Findings:" in decision.reason
    assert "the total drops the last item" in decision.reason
    assert "iterate over the whole list" in decision.reason
    assert "src/total.py" in decision.reason
