"""Guards at their edges: what is reserved, who a loop belongs to, what an ending says.
Pinned where the mutation audit found changes that no test noticed."""

from __future__ import annotations

import dataclasses

import pytest

from autopilot_codex import guards
from autopilot_codex.state import Inflight, Reservation
from autopilot_codex.styles.autopilot import caps
from autopilot_codex.styles.context import Limits
from tests.unit.test_reducer import make_state


def test_the_slot_and_every_reservation_are_reserved_together() -> None:
    slot = Inflight("review", "t", 1, 0, 0.0, 9.0, reserved_usd=0.5)
    held = [Reservation("a", 2, 0.25, 9.0), Reservation("b", 3, 0.125, 9.0)]
    state = make_state(inflight=slot, reservations=held, budget_usd=2.0)
    assert caps.reserved(state) == 0.875
    assert caps.fits(state, 1.125 - state.budget_used_usd)
    assert not caps.fits(state, 1.126 - state.budget_used_usd)


def test_a_session_loop_records_its_owner_s_host_and_nobody_else_s() -> None:
    state = make_state(owner="session", session_id="s1", host="claude")
    assert guards.claim(state, "s1", "codex").host == "codex"
    assert guards.claim(state, "s2", "codex").host == "claude"
    assert guards.claim(state, "s1", None).host == "claude"
    driven = make_state(owner="driver", session_id="s1", host="claude")
    assert guards.claim(driven, "s1", "codex").host == "claude"


def test_every_session_of_a_driven_loop_owns_it() -> None:
    assert guards.owns(make_state(owner="driver", session_id="s1"), "s2")
    assert guards.owns(make_state(owner="driver", session_id="s1"), None)
    assert not guards.owns(make_state(owner="session", session_id="s1"), None)


def test_only_a_clean_done_says_the_rails_come_off() -> None:
    _, done = caps.end(make_state(), "done", "all tasks approved", "stop.done")
    _, failed = caps.end(make_state(), "aborted", "no progress", "stop.aborted")
    assert "safety rails stay on" not in done.message
    assert "safety rails stay on" in failed.message


def test_a_decision_is_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        guards.allow("x").event = "y"  # type: ignore[misc]


def test_a_refused_call_says_what_is_left_and_what_is_held() -> None:
    spent = make_state(budget_usd=1.0, budget_used_usd=0.75)
    (state, decision) = caps.budget_guard(spent, 0.5, "stop.budget", now=None) or (spent, None)
    assert decision is not None and state.status == "stopped_budget"
    assert "$0.25 left, the next manager call may cost $0.50" in (state.stop_reason or "")
    slot = Inflight("review", "t", 1, 0, 0.0, 9.0, reserved_usd=0.125)
    held = make_state(budget_usd=1.0, budget_used_usd=0.75, inflight=slot)
    step = caps.budget_guard(held, 0.2, "stop.budget", now=None)
    assert step is not None and step[0].status == "running"
    assert "$0.12 free ($0.12 reserved)" in step[1].reason


def test_a_claimed_loop_keeps_its_host_when_the_prompt_names_none() -> None:
    unowned = make_state(owner="session", session_id=None, host="codex", status="running")
    claimed = guards.claim(unowned, "s1", None, typed=True)
    assert (claimed.session_id, claimed.host) == ("s1", "codex")
    claimed = guards.claim(unowned, "s1", "claude", typed=True)
    assert claimed.host == "claude"


def test_a_stop_without_words_says_the_user_stopped_it() -> None:
    assert guards.stop(make_state(), "  ").stop_reason == "stopped by the user"
    assert guards.stop(make_state(), " tests are red ").stop_reason == "tests are red"


def test_limits_are_a_value_not_a_record_to_edit() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Limits().stall_limit = 0  # type: ignore[misc]


def test_a_reached_cap_refuses_a_call_the_budget_would_still_fit() -> None:
    """`fits` (the background review's check before it reserves) checks every cap first: a
    loop at its token cap makes no paid call, however much money is left."""
    assert not caps.fits(make_state(budget_usd=5.0, implementer_tokens=10, max_tokens=10), 0.01)
    assert caps.fits(make_state(budget_usd=5.0, implementer_tokens=9, max_tokens=10), 0.01)


def test_a_call_s_worst_case_prices_its_instructions_and_its_text() -> None:
    from types import SimpleNamespace

    from autopilot_codex.config import Config
    from autopilot_codex.manager.prompts import Prompt
    from autopilot_codex.manager.select import worst_case_usd
    from autopilot_codex.styles.autopilot.record import of

    config = Config()
    ctx = SimpleNamespace(config=config)
    state = make_state()
    prompt = Prompt("i" * 40_000, "t" * 40_000)
    worst = caps.estimate(ctx, state, prompt)  # type: ignore[arg-type]
    text = "i" * 40_000 + "t" * 40_000
    assert worst == worst_case_usd(config, of(state).model, text, config.max_output_tokens)
    assert worst > caps.estimate(ctx, state, Prompt("i" * 40_000, ""))  # type: ignore[arg-type]
