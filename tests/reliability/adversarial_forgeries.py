"""Corpus rows of the class "the witness": a value written into the loop's files behind the
bridge's back (with or without its witness and ledger) must never stick."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from autopilot_codex.paths import project_dir
from tests.reliability.adversarial_routes import WITNESS, Forge

# -- the witness: forged values --------------------------------------------------------------


def _state_file(repo: Path) -> Path:
    return project_dir(repo) / "state.json"


def _edit_state_file(repo: Path, **changes: object) -> None:
    path = _state_file(repo)
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _unkeyed(**changes: object) -> Callable[[Path], None]:
    def forge(repo: Path) -> None:
        from tests.reliability.test_tamper import _forge_unkeyed

        _forge_unkeyed(repo, **changes)

    return forge


def _witness_then_state(damage: str | None) -> Callable[[Path], None]:
    def forge(repo: Path) -> None:
        witness = _state_file(repo).with_name("witness.json")
        if damage is None:
            witness.unlink()
        else:
            witness.write_text(damage)
        _edit_state_file(repo, budget_usd=9999.0)

    return forge


def _ledger(edit: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    def forge(repo: Path) -> None:
        ledger = project_dir(repo) / "events.jsonl"
        ledger.write_text("".join(edit(ledger.read_text().splitlines(keepends=True))))
        _edit_state_file(repo, budget_usd=9999.0)

    return forge


def _appended(lines: list[str]) -> list[str]:
    forged = {"ts": "2026-01-01T00:00:00+00:00", "event": "caps", "budget_usd": 9999.0}
    return [*lines, json.dumps({**forged, "mac": "0" * 64}) + "\n"]


def _plan_acceptance(repo: Path) -> None:
    plan = project_dir(repo) / "plan.json"
    data = json.loads(plan.read_text())
    data["tasks"][0]["acceptance"] = ["anything goes"]
    plan.write_text(json.dumps(data))


FORGE_ROUTES = [
    Forge(WITNESS, "budget raised in state.json", lambda r: _edit_state_file(r, budget_usd=9999.0)),
    Forge(WITNESS, "state and witness rewritten together", _unkeyed(budget_usd=9999.0)),
    Forge(
        WITNESS,
        "iterations raised with the witness",
        _unkeyed(max_iterations=9999),
        "max_iterations",
        9999,
    ),
    Forge(WITNESS, "witness deleted, then state edited", _witness_then_state(None)),
    Forge(WITNESS, "witness damaged, then state edited", _witness_then_state("{ damaged")),
    Forge(WITNESS, "ledger truncated", _ledger(lambda lines: lines[:-1])),
    Forge(WITNESS, "ledger emptied", _ledger(lambda lines: [])),
    Forge(WITNESS, "forged ledger line appended", _ledger(_appended)),
    Forge(WITNESS, "plan acceptance replaced", _plan_acceptance, "acceptance", ["anything goes"]),
    Forge(
        WITNESS,
        "status set back to running by hand",
        lambda r: _edit_state_file(r, status="running", budget_usd=9999.0),
    ),
]
