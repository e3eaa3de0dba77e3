"""The rounds' circuit breaker and rate-limit backoff, as table tests (issue 23)."""

from __future__ import annotations

import pytest

from autopilot_codex.rounds.breaker import Breaker, delay, observe, rate_limited, tripped


def test_rounds_that_change_nothing_trip_the_breaker_after_k() -> None:
    b = Breaker()
    for _ in range(2):
        b = observe(b, ok=True, changed=False, detail="")
        assert tripped(b, 3) is None
    b = observe(b, ok=True, changed=False, detail="")
    assert tripped(b, 3) == (
        "no_progress",
        "no progress: 3 rounds in a row changed nothing in the tree",
    )
    assert tripped(b, 0) is None  # 0 turns the breaker off


def test_a_change_resets_the_idle_count() -> None:
    b = observe(
        observe(Breaker(), ok=True, changed=False, detail=""), ok=True, changed=True, detail=""
    )
    assert b.idle_rounds == 0


def test_the_same_failure_trips_it_different_ones_do_not() -> None:
    b = Breaker()
    for pid in (101, 202, 303):
        b = observe(b, ok=False, changed=False, detail=f"crashed: exit 1 (pid {pid})")
    assert tripped(b, 3) == ("error", "the same failure 3 times in a row")
    c = Breaker()
    for detail in ("crashed", "timeout", "crashed"):
        c = observe(c, ok=False, changed=False, detail=detail)
    assert tripped(c, 3) is None


def test_rate_limits_never_trip_it() -> None:
    b = Breaker()
    for _ in range(5):
        b = observe(b, ok=False, changed=False, detail="API Error: 429 rate_limit_error")
    assert tripped(b, 3) is None


@pytest.mark.parametrize(
    "detail",
    ["API Error: 429 Too Many Requests", "overloaded_error", "Rate limit reached", "HTTP 529"],
)
def test_rate_limit_words(detail: str) -> None:
    assert rate_limited(detail)


def test_no_wait_for_other_failures() -> None:
    assert delay("crashed: exit 1", 1, jitter=lambda: 0.5) == 0.0


def test_retry_after_is_honoured_and_capped() -> None:
    assert delay("429 Too Many Requests; Retry-After: 2", 1, jitter=lambda: 0.9) == 2.0
    assert delay("429; retry-after: 9999", 1, jitter=lambda: 0.9, cap_s=60) == 60.0


def test_exponential_with_jitter_and_a_cap() -> None:
    waits = [
        delay("overloaded", n, jitter=lambda: 1.0, base_s=2, cap_s=20) for n in (1, 2, 3, 4, 5)
    ]
    assert waits == [2.0, 4.0, 8.0, 16.0, 20.0]
    assert delay("overloaded", 3, jitter=lambda: 0.0, base_s=2, cap_s=20) == 4.0


def test_a_verifier_that_changes_nothing_is_not_idle() -> None:
    b = observe(Breaker(idle_rounds=2), ok=True, changed=False, detail="", verify=True)
    assert b.idle_rounds == 2 and tripped(b, 3) is None


def test_a_rate_limit_the_host_named_in_its_fields_is_waited_for_whatever_the_words() -> None:
    b = Breaker()
    for _ in range(5):
        b = observe(b, ok=False, changed=False, detail="exit code 1", limited=True)
    assert tripped(b, 3) is None
    assert delay("exit code 1", 2, jitter=lambda: 0.0, limited=True) == 2.0
    assert delay("exit code 1", 2, jitter=lambda: 0.0) == 0.0
