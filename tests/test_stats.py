"""Significance tests against scipy, determinism for a seed, corrections by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sp

from rankeval.analysis.significance import bootstrap, compare, correct, randomization_p

RNG = np.random.default_rng(42)
A = RNG.random(200)
B = np.clip(A + RNG.normal(0.03, 0.1, 200), 0, 1)


def test_t_test_matches_scipy():
    ours = compare(A, B, "t")
    theirs = sp.ttest_rel(B, A)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-12)
    low, high = sp.ttest_1samp(B - A, 0).confidence_interval(0.95)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((low, high), rel=1e-12)
    diff = B - A
    assert ours.effect_size == pytest.approx(diff.mean() / diff.std(ddof=1))
    assert ours.delta == pytest.approx(B.mean() - A.mean())


def _signed_rank_sum(diff: np.ndarray) -> tuple[float, np.ndarray]:
    """T+ (sum of the ranks of the positive differences) and the ranks of |diff|, ties
    averaged: computed here by hand, not by scipy."""
    a = np.abs(diff)
    order = np.argsort(a, kind="stable")
    ranks = np.empty(len(a))
    i = 0
    while i < len(a):  # average the ranks of equal |d|
        j = i
        while j + 1 < len(a) and a[order[j + 1]] == a[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float(ranks[diff > 0].sum()), ranks


def test_wilcoxon_large_sample_matches_the_normal_approximation_by_hand():
    diff = B - A
    t, ranks = _signed_rank_sum(diff)
    n = len(diff)
    _, counts = np.unique(ranks, return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24 - (counts**3 - counts).sum() / 48
    z = abs(t - n * (n + 1) / 4) / math.sqrt(var)
    assert compare(A, B, "wilcoxon").p_value == pytest.approx(math.erfc(z / math.sqrt(2)),
                                                              rel=1e-9)


def test_wilcoxon_small_sample_matches_the_exact_distribution_by_enumeration():
    rng = np.random.default_rng(5)
    a = rng.random(12)
    b = a + rng.normal(0.05, 0.1, 12)  # distinct, non-zero differences: the exact test
    t, ranks = _signed_rank_sum(b - a)
    signs = np.array(list(itertools.product([0, 1], repeat=12)))  # every sign pattern
    sums = signs @ ranks
    p = min(1.0, 2 * min((sums <= t).mean(), (sums >= t).mean()))
    assert compare(a, b, "wilcoxon").p_value == pytest.approx(p, rel=1e-12)


def test_randomization_is_deterministic_and_agrees_with_scipy():
    diff = B - A
    p1 = randomization_p(diff, 20_000, seed=3)
    assert p1 == randomization_p(diff, 20_000, seed=3)
    assert p1 != randomization_p(diff, 20_000, seed=4) or p1 < 1e-3

    small = (B - A)[:40] * 0.3  # a case with a p-value far from 0, so the MC error shows
    ours = randomization_p(small, 20_000, seed=1)
    theirs = sp.permutation_test(
        (small,), np.mean, permutation_type="samples", n_resamples=20_000,
        alternative="two-sided", random_state=1,
    ).pvalue
    assert 0.01 < theirs < 0.99
    assert ours == pytest.approx(theirs, abs=0.02)  # two Monte Carlo estimates of one p


def test_bootstrap_interval_agrees_with_scipy():
    diff = (B - A)[:60]
    p, low, high = bootstrap(diff, 20_000, seed=5, level=0.9)
    assert (p, low, high) == bootstrap(diff, 20_000, seed=5, level=0.9)
    ref = sp.bootstrap((diff,), np.mean, n_resamples=20_000, confidence_level=0.9,
                       method="percentile", random_state=5).confidence_interval
    width = ref.high - ref.low
    assert low == pytest.approx(ref.low, abs=0.05 * width)
    assert high == pytest.approx(ref.high, abs=0.05 * width)


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap", "wilcoxon"])
def test_a_run_against_itself(test):
    c = compare(A, A, test, rounds=1000)
    assert c.delta == 0 and c.p_value == 1.0 and c.effect_size == 0
    assert (c.wins, c.ties, c.losses) == (0, 200, 0)


def test_win_tie_loss():
    c = compare(np.array([0.1, 0.5, 0.5, 0.9]), np.array([0.2, 0.5, 0.4, 0.9]), "t")
    assert (c.wins, c.ties, c.losses) == (1, 2, 1)


def test_holm_and_bonferroni_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max
    assert correct(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert correct(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert correct(p, "none") == p
    assert correct([0.5, 0.9], "bonferroni") == [1.0, 1.0]
