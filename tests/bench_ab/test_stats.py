"""The benchmark's statistics against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from bench.ab import stats


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # p = 0: centre = (z²/2n)/(1+z²/n) = half, so the interval is [0, 2·centre].
        (0, 10, 0.0, 2 * (1.959963984540054**2 / 20) / (1 + 1.959963984540054**2 / 10)),
        # The textbook 5/10: 0.2366 to 0.7634.
        (5, 10, 0.23659, 0.76341),
        # 10/10 mirrors 0/10.
        (10, 10, 1 - 0.27753, 1.0),
    ],
)
def test_wilson_interval(k: int, n: int, low: float, high: float) -> None:
    got = stats.wilson(k, n)
    assert got[0] == pytest.approx(low, abs=1e-4)
    assert got[1] == pytest.approx(high, abs=1e-4)


def test_wilson_without_trials_knows_nothing() -> None:
    assert stats.wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("only_a", "only_b", "p"),
    [
        (0, 0, 1.0),
        # n = 6, k = 1: 2 · (C(6,0) + C(6,1)) / 2⁶ = 14/64.
        (1, 5, 14 / 64),
        (5, 1, 14 / 64),
        # n = 6, k = 0: 2/64.
        (0, 6, 2 / 64),
        # Balanced: the two tails overlap, capped at 1.
        (3, 3, 1.0),
        # n = 10, k = 2: 2 · (1 + 10 + 45) / 1024.
        (8, 2, 112 / 1024),
    ],
)
def test_exact_mcnemar(only_a: int, only_b: int, p: float) -> None:
    assert stats.mcnemar_exact(only_a, only_b) == pytest.approx(p)


def test_bootstrap_of_identical_pairs_is_a_point() -> None:
    assert stats.bootstrap_difference([(True, False)] * 7) == (1.0, 1.0)
    assert stats.bootstrap_difference([(True, True), (False, False)] * 3) == (0.0, 0.0)
    assert stats.bootstrap_difference([]) == (0.0, 0.0)


def test_bootstrap_is_reproducible_and_brackets_the_difference() -> None:
    pairs = [(True, False)] * 6 + [(False, True)] * 2 + [(True, True)] * 4 + [(False, False)] * 8
    first = stats.bootstrap_difference(pairs)
    assert first == stats.bootstrap_difference(pairs)
    result = stats.paired(pairs)
    assert (result.pairs, result.only_arm, result.only_base) == (20, 6, 2)
    assert result.difference == pytest.approx(0.2)
    assert result.low < 0.2 < result.high
    # The normal approximation of the paired difference's interval, as a sanity bound:
    # var(d) = (8/20) - 0.2² = 0.36, se = 0.6/√20 ≈ 0.134, so about 0.2 ± 0.26.
    assert result.low == pytest.approx(0.2 - 1.96 * 0.6 / math.sqrt(20), abs=0.06)
    assert result.high == pytest.approx(0.2 + 1.96 * 0.6 / math.sqrt(20), abs=0.06)
    assert result.p_value == pytest.approx(2 * (1 + 8 + 28) / 256)


def test_quantile_interpolates_between_ranks() -> None:
    assert stats._quantile([0.0, 1.0, 2.0, 3.0], 0.5) == 1.5
    assert stats._quantile([5.0], 0.975) == 5.0


def test_ratio_and_median() -> None:
    assert stats.ratio(3.0, 0) is None
    assert stats.ratio(3.0, 2) == 1.5
    assert stats.median([]) is None
    assert stats.median([3.0, 1.0, 2.0]) == 2.0
    assert stats.median([4.0, 1.0, 2.0, 3.0]) == 2.5
