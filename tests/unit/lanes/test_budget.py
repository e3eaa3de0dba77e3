"""The one budget: reservations never let the spent and the reserved pass the cap."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from autopilot_codex.lanes.budget import Amount, Budget, cap


def test_a_lane_starts_only_when_its_reservation_fits() -> None:
    b = Budget(cap(3.0, 0, 0))
    assert b.reserve("a", Amount(1.5, math.inf, math.inf))
    assert b.reserve("b", Amount(1.5, math.inf, math.inf))
    # A budget fitting two lanes never starts a third.
    assert not b.reserve("c", Amount(0.01, math.inf, math.inf))
    assert set(b.reserved) == {"a", "b"}
    b.settle("a", Amount(0.5, 100, 10))
    # What a lane did not spend goes back.
    assert b.free() == Amount(1.0, math.inf, math.inf)
    assert b.reserve("c", Amount(1.0, math.inf, math.inf))


def test_the_default_share_is_the_free_budget_over_the_lanes_not_running() -> None:
    b = Budget(cap(6.0, 900, 0))
    assert b.default_share(3) == Amount(2.0, 300.0, math.inf)
    assert b.reserve("a", b.default_share(3))
    assert b.default_share(3) == Amount(2.0, 300.0, math.inf)
    assert b.default_share(3, given_usd=0.5) == Amount(0.5, 300.0, math.inf)


def test_a_key_holds_one_reservation_and_nothing_is_not_a_reservation() -> None:
    b = Budget(cap(2.0, 0, 60))
    assert b.reserve("a", Amount(1.0, math.inf, 30))
    assert not b.reserve("a", Amount(0.5, math.inf, 10))
    assert not b.reserve("z", Amount(0.0, math.inf, 10))
    # The manager's spend comes out of the same budget.
    b.charge(Amount(1.0, 0, 0))
    assert b.free() == Amount(0.0, math.inf, 30)
    assert not b.reserve("b", Amount(0.1, math.inf, 1))


def test_a_manager_call_is_held_at_its_worst_case_only_when_that_fits() -> None:
    b = Budget(cap(1.0, 100, 0))
    assert b.reserve("a", Amount(0.5, 50, math.inf))
    assert not b.ask(Amount(0.6, 0, 0))
    assert b.asking == Amount()
    assert b.ask(Amount(0.5, 0, 0))
    # Held: no lane's reservation can take it meanwhile.
    assert b.free() == Amount(0.0, 50.0, math.inf)
    assert not b.reserve("b", Amount(0.1, 10, math.inf))
    b.answered()
    b.charge(Amount(0.1, 0, 0))
    assert (b.asking, b.free()) == (Amount(), Amount(0.4, 50.0, math.inf))


def test_the_ledger_reads_back_what_it_wrote() -> None:
    b = Budget(cap(None, 1000, 0))
    b.reserve("a", Amount(math.inf, 500, math.inf))
    b.ask(Amount(0.5, 0, 0))
    b.settle("b", Amount(0.25, 40, 3))
    raw = b.record()
    assert raw["limit"] == {"usd": None, "tokens": 1000.0, "seconds": None}
    assert Budget.read(raw) == b


amounts = st.floats(min_value=0.0, max_value=5.0, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(
    limit=st.floats(min_value=0.0, max_value=10.0),
    steps=st.lists(
        st.tuples(st.sampled_from(["start", "end", "manager"]), amounts, amounts), max_size=40
    ),
)
def test_the_total_never_passes_the_cap_whatever_the_interleaving(
    limit: float, steps: list[tuple[str, float, float]]
) -> None:
    """Lanes start and end in any order, each spending at most what it holds; the manager spends
    only what is free (it is asked only then): spent + reserved stays within the cap."""
    b = Budget(cap(limit, 0, 0))
    running: list[str] = []
    for n, (what, ask, frac) in enumerate(steps):
        if what == "start":
            if b.reserve(str(n), Amount(ask, math.inf, math.inf)):
                running.append(str(n))
        elif what == "end" and running:
            key = running.pop(int(frac * 7) % len(running))
            b.settle(key, Amount(b.reserved[key].usd * min(1.0, frac / 5), 0, 0))
        elif what == "manager":
            b.charge(Amount(min(ask, b.free().usd), 0, 0))
        holding = sum(v.usd for v in b.reserved.values())
        assert b.spent.usd + holding <= limit + 1e-9
        assert set(b.reserved) == set(running)
