"""The one spend figure (`spend`): computed from the engine's state or the loop's files alike,
and written one way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autopilot_codex.loopfiles import LoopFiles
from autopilot_codex.spend import Spend, charged, of_files, of_state, usd
from autopilot_codex.state import planless
from autopilot_codex.state_file import migrate
from autopilot_codex.styles.ralph.record import RalphRecord
from autopilot_codex.styles.rounds import RoundsRecord


def files(
    state: dict[str, Any] | None = None, rollout: list[dict[str, Any]] | None = None
) -> LoopFiles:
    return LoopFiles(Path("/nowhere"), state or {}, {}, [], rollout or [], {})


def test_a_figure_is_written_one_way() -> None:
    assert [usd(0), usd(-1), usd(0.0045), usd(0.01), usd(1.599)] == [
        "$0.00", "$0.00", "<$0.01", "$0.01", "$1.60",
    ]  # fmt: skip
    assert usd(0.42, estimated=True) == "~$0.42"


def test_both_meters_and_their_total_and_what_is_left() -> None:
    spent = Spend(0.0072, 1.59, 2.0)
    assert spent.text() == "manager <$0.01 · implementer $1.59 · total $1.60 of $2.00"
    assert spent.left == pytest.approx(0.4028)
    assert spent.short() == "<$0.01 + $1.59 = $1.60 of $2.00"
    assert Spend(1, 2).left is None and Spend(1, 2).total_text() == "$3.00"
    guessed = Spend(0, 1.5, None, ("claude-next-9",))
    assert guessed.text() == (
        "manager $0.00 · implementer ~$1.50 · total ~$1.50 (~ estimated: claude-next-9 priced by rule)"
    )
    assert guessed.as_json()["estimated"] == ["claude-next-9"]


def test_a_restated_charge_is_not_summed_again() -> None:
    assert charged({"event": "ask", "cost_usd": 0.0072, "charged_usd": 0.001}) == pytest.approx(
        0.0082
    )
    assert charged({"event": "question.answered", "cost_usd": 0.0072}) == 0.0
    assert charged({"event": "review", "cost_usd": True, "charged_usd": "1"}) == 0.0


def test_the_state_names_its_styles_cap() -> None:
    base = planless(goal="g", worktree="/w", head="h", style="autopilot")
    auto = base.evolve(budget_used_usd=0.5, implementer_used_usd=1.0, budget_usd=3.0)
    assert of_state(auto) == Spend(0.5, 1.0, 3.0)
    # A ralph loop without a budget stores 0: no "of $5.00", no "$0.00 of $0.00".
    ralph = base.evolve(style="ralph", own=RalphRecord(prompt="p"), budget_usd=0.0)
    assert of_state(ralph).budget is None and of_state(ralph).total_text() == "$0.00"
    assert of_state(ralph.evolve(budget_usd=2.0)).budget == 2.0
    rounds = base.evolve(style="rounds", own=RoundsRecord())
    assert of_state(rounds).budget is None


def test_the_files_name_each_styles_cap() -> None:
    assert of_files(files({"style": "autopilot", "budget_usd": 2})).budget == 2.0
    assert of_files(files({"style": "autopilot", "budget_usd": True})).budget is None
    # A ralph loop of schema 3 kept "no budget" in its record: loading migrates it to the 0.
    old = {"schema_version": 3, "style": "ralph", "budget_usd": 5.0, "ralph": {"budget_usd": None}}
    assert of_files(files(migrate(old))).budget is None
    assert of_files(files({"style": "ralph", "ralph": "junk"})).budget is None


def test_a_rounds_runs_spend_and_cap_are_its_last_runs_with_every_raise() -> None:
    rollout: list[dict[str, Any]] = [
        {"kind": "run", "run": "r1", "budget_usd": 9.0},
        {"kind": "round", "run": "r1", "cost_usd": 5.0},
        {"kind": "run", "run": "r2", "budget_usd": None},
        {"kind": "round", "run": "r2", "cost_usd": 0.25, "manager_usd": 0.05, "unpriced": "m"},
        {"kind": "round", "run": "r2", "cost_usd": None, "manager_usd": 0.05},
    ]
    spent = of_files(files({"style": "rounds", "run_id": "r2"}, rollout))
    assert spent.manager == pytest.approx(0.1)
    assert (spent.implementer, spent.budget) == (0.25, None)
    assert spent.estimated == ("m",) and spent.implementer_name == "rounds"
    raised: list[dict[str, Any]] = rollout + [
        {"kind": "raise", "run": "r2", "budget_usd": 1.0},
        {"kind": "raise", "run": "r2", "rounds": 20},
        {"kind": "raise", "run": "r1", "budget_usd": 7.0},
    ]
    assert of_files(files({}, raised)).budget == 1.0
