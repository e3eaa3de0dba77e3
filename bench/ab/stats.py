"""The benchmark's statistics, pure: a resolve rate with its 95 % Wilson interval, the exact
McNemar test on the discordant pairs of two paired arms, and a paired bootstrap interval of
their difference with a fixed seed (so a report is reproducible from its raw trials).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

# The two-sided 95 % normal quantile.
Z95 = 1.959963984540054
BOOTSTRAP_SEED = 39
BOOTSTRAP_REPS = 10_000


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there is no trial. Chosen over
    the normal interval because it stays inside [0, 1] and behaves at 0 and n successes, which
    small task sets hit."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: under "no difference" each discordant pair is a fair
    coin, so the smaller count is binomial(b + c, 1/2). 1.0 when there is no discordant pair."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / float(2**n)
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class Paired:
    """An arm against the baseline over the pairs both ran: (task, repetition) matched."""

    pairs: int
    only_arm: int  # the arm resolved it, the baseline did not
    only_base: int  # the baseline resolved it, the arm did not
    difference: float  # resolve rate of the arm minus the baseline's, over the pairs
    low: float  # the paired bootstrap's 95 % interval of the difference
    high: float
    p_value: float  # exact McNemar


def bootstrap_difference(
    pairs: Sequence[tuple[bool, bool]],
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """The percentile 95 % interval of mean(arm) - mean(base), resampling whole pairs, so the
    interval keeps the pairing (a task hard for both arms moves both). (0, 0) with no pair."""
    if not pairs:
        return 0.0, 0.0
    rng = random.Random(seed)
    deltas = [int(a) - int(b) for a, b in pairs]
    n = len(deltas)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(reps))
    return _quantile(means, 0.025), _quantile(means, 0.975)


def _quantile(ordered: Sequence[float], q: float) -> float:
    # Linear interpolation between the closest ranks (numpy's default, "type 7").
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def paired(pairs: Sequence[tuple[bool, bool]]) -> Paired:
    """Each pair is (arm resolved, baseline resolved) for one task and repetition."""
    only_arm = sum(1 for a, b in pairs if a and not b)
    only_base = sum(1 for a, b in pairs if b and not a)
    n = len(pairs)
    difference = (only_arm - only_base) / n if n else 0.0
    low, high = bootstrap_difference(pairs)
    return Paired(n, only_arm, only_base, difference, low, high, mcnemar_exact(only_arm, only_base))


def ratio(numerator: float, denominator: float) -> float | None:
    """numerator / denominator, None when nothing is divided by (no resolved task: no $ per
    resolved task, rather than an infinity)."""
    return numerator / denominator if denominator else None


def median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
