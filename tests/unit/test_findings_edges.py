"""The review-findings ledger at its edges: the defaults the config gives, what is clipped and
listed, and that its records are values. Pinned where the mutation audit found changes that no
test noticed."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex.config import Config
from autopilot_codex.styles.autopilot.convergence import Rules
from autopilot_codex.styles.autopilot.findings import Ledger, Raised, listing
from tests.unit.test_convergence_rules import raised, step


def test_the_rules_without_settings_are_the_config_defaults() -> None:
    assert Rules() == Rules.of(Config()) == Rules(2, 12, 3)


def test_a_long_recommendation_is_clipped_at_1500_characters() -> None:
    exact = step(Ledger(), Raised("high", "a.py", "t1", "r" * 1500)).ledger.entries[0]
    assert exact.recommendation == "r" * 1500
    long = step(Ledger(), Raised("high", "a.py", "t2", "r" * 1501)).ledger.entries[0]
    assert long.recommendation.startswith("r" * 1460) and "characters cut" in long.recommendation


def test_the_listing_shows_twenty_findings_unless_told() -> None:
    ledger = step(Ledger(), *(raised(f"finding {n}") for n in range(25))).ledger
    assert len(listing(ledger, "T1")) == 20
    assert len(listing(ledger, "T1", limit=3)) == 3


def test_the_ledger_s_records_are_values_not_records_to_edit() -> None:
    merged = step(Ledger(), raised("one"))
    for record in (merged, merged.ledger, merged.ledger.entries[0], Rules()):
        field = dataclasses.fields(record)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, None)
