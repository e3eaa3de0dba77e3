"""The Stop gives the checks what the hook's time leaves after its manager calls, never more:
a check that does not fit is reported as timed out, never passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from autopilot_codex.checks import evidence
from autopilot_codex.checks.run import CheckSpec
from autopilot_codex.store import Store


def test_the_stop_runs_the_checks_within_what_the_calls_leave(
    planned: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Calls that may take all of the hook's time leave the checks their floor, made short here.
    monkeypatch.setattr(evidence, "MIN_BUDGET_S", 0.5)
    store = Store(planned)
    with store.locked():
        state = store.load()
        assert state is not None
        state = state.evolve(checks=[CheckSpec("sleep 60"), CheckSpec("echo late")])
        state, (slow, late) = evidence.gather(
            store, state, manager_calls=1, call_timeout_s=evidence.HOOK_TIMEOUT_S
        )
    assert slow.status == "timeout" and slow.duration_s < 60
    assert late.status == "timeout" and "budget" in late.note
    assert state.last_checks == [slow, late]
