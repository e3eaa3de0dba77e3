"""The rounds' circuit breaker and their backoff on rate limits. Pure: the driver passes in
what a round did, and the sleep and the randomness it uses.

- K implementing rounds in a row that change nothing in the tree end the run as
  `no_progress` (a verifier that changes nothing is doing its job, and is not counted);
  K failed attempts in a row with the same failure end it as `error` at once, rather than
  after every retry (K: `--no-progress-rounds`, default 3; 0 turns the breaker off);
- a round failed by the provider's rate limit or overload is retried after a wait: its
  `Retry-After` when the failure names one, else exponential with jitter, capped. Such
  failures are the provider's, not the work's, so they never trip the breaker.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

NO_PROGRESS_ROUNDS = 3
BACKOFF_BASE_S = 2.0
BACKOFF_CAP_S = 120.0

_RATE = re.compile(
    r"\b(429|529|rate[ _-]?limit\w*|overloaded\w*|too many requests)\b", re.IGNORECASE
)
_RETRY_AFTER = re.compile(r"retry[- _]after\W{0,4}(\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMBERS = re.compile(r"\d+")


@dataclass(frozen=True)
class Breaker:
    # Counted rounds in a row that changed nothing in the tree.
    idle_rounds: int = 0
    # The last failure (numbers left out: pids and timings differ) and how often in a row.
    failure: str = ""
    same_failures: int = 0


def rate_limited(detail: str) -> bool:
    return bool(_RATE.search(detail))


def observe(
    breaker: Breaker,
    *,
    ok: bool,
    changed: bool,
    detail: str,
    verify: bool = False,
    limited: bool = False,
) -> Breaker:
    """The breaker after one attempt. `limited`: the host's own error fields named a rate
    limit or an overload (the words of `detail` are the fallback for hosts that name none)."""
    if ok and verify and not changed:
        return Breaker(idle_rounds=breaker.idle_rounds)
    if ok:
        return Breaker(idle_rounds=0 if changed else breaker.idle_rounds + 1)
    if limited or rate_limited(detail):
        return breaker
    key = _NUMBERS.sub("#", detail.strip())[:500]
    same = breaker.same_failures + 1 if key == breaker.failure else 1
    return Breaker(breaker.idle_rounds, key, same)


def tripped(breaker: Breaker, limit: int) -> tuple[Literal["no_progress", "error"], str] | None:
    """How and why the run ends here, or None."""
    if limit <= 0:
        return None
    if breaker.idle_rounds >= limit:
        why = f"no progress: {breaker.idle_rounds} rounds in a row changed nothing in the tree"
        return "no_progress", why
    if breaker.same_failures >= limit:
        return "error", f"the same failure {breaker.same_failures} times in a row"
    return None


def delay(
    detail: str,
    failures: int,
    *,
    jitter: Callable[[], float],
    base_s: float = BACKOFF_BASE_S,
    cap_s: float = BACKOFF_CAP_S,
    limited: bool = False,
) -> float:
    """Seconds to wait before retrying a failed round: 0 unless it was a rate limit or an
    overload (`limited`, or said so in `detail`). `failures` counts this one; `jitter()` is in
    [0, 1)."""
    if not (limited or rate_limited(detail)):
        return 0.0
    named = _RETRY_AFTER.search(detail)
    if named is not None:
        return min(float(named.group(1)), cap_s)
    exponential = min(cap_s, base_s * 2 ** max(0, failures - 1))
    # Half fixed, half random: retries from several runs spread out, none comes at once.
    return float(exponential * (0.5 + 0.5 * jitter()))
