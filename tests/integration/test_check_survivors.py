"""What a red check tells the implementer and what the Stop gives the checks, pinned where a
mutation audit found nothing failing when they changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autopilot_codex.checks import evidence
from autopilot_codex.checks import run as checks
from autopilot_codex.checks.run import CheckSpec, run_checks
from tests.conftest import ROOT, make_repo


def test_a_check_killed_by_a_signal_has_no_exit_code_and_says_which(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (result,) = run_checks(repo, [CheckSpec("kill -TERM $$")], timeout_s=60)
    # A signal is not an exit status: -15 must never read as a code the command chose.
    assert (result.status, result.exit_code) == ("fail", None)
    assert result.note == "killed by signal 15"


def test_a_red_check_tells_the_implementer_to_fix_the_cause(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (result,) = run_checks(repo, [CheckSpec("exit 3")], timeout_s=60)
    assert (result.status, result.exit_code) == ("fail", 3)
    reason = checks.failure_reason([result])
    assert "Fix the cause (not the check)" in reason
    assert reason.index("exit 3") < reason.index("Fix the cause")


def _stop_timeouts(name: str) -> set[int]:
    config = json.loads((ROOT / "hooks" / name).read_text())
    return {h["timeout"] for group in config["hooks"]["Stop"] for h in group["hooks"]}


@pytest.mark.parametrize("name", ["hooks.json", "codex.json"])
def test_the_checks_budget_assumes_the_stop_timeout_the_hosts_are_given(name: str) -> None:
    assert _stop_timeouts(name) == {int(evidence.HOOK_TIMEOUT_S)}


def test_the_checks_budget_leaves_room_for_the_manager_calls() -> None:
    # 600 s of hook, 45 s kept for git, the lock, the state and the answer.
    assert evidence.budget_s(0, 180.0) == 555.0
    assert evidence.budget_s(2, 100.0) == 355.0
    # The calls plus the checks plus the margin fit the hook's time, whenever that can be.
    for calls in range(4):
        budget = evidence.budget_s(calls, 120.0)
        if budget > evidence.MIN_BUDGET_S:
            assert budget + calls * 120.0 + evidence.MARGIN_S == evidence.HOOK_TIMEOUT_S
    # Calls that could take all of it still leave the checks their floor.
    assert evidence.budget_s(3, 540.0) == 15.0
    assert evidence.MARGIN_S > 0 and 0 < evidence.MIN_BUDGET_S < evidence.HOOK_TIMEOUT_S
