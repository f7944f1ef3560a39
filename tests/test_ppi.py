"""Prediction-powered inference (SPEC §12, #48): the estimator against SPEC's worked example 12,
against ppi_py (the reference: ppi_mean_pointestimate, ppi_mean_ci, classical_mean_ci) on
generated per-query values with ties, and its intervals' coverage by simulation, where the
truth is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from rankeval.analysis.ppi import gold_needed, ppi_mean, tuned_lambda
from rankeval.errors import OptionError

H = [1, 0, 0.5, 1]
A_GOLD = [1, 0.5, 0.5, 1]
A_OTHER = [0, 1, 0.5, 1, 0]


def test_worked_example_12():
    classic = ppi_mean(H, A_GOLD, A_OTHER, lam=1)
    assert classic.ppi.value == pytest.approx(0.375, abs=1e-12)
    assert (classic.ppi.low, classic.ppi.high) == pytest.approx((-0.0707, 0.8207), abs=1e-4)
    tuned = ppi_mean(H, A_GOLD, A_OTHER)
    assert tuned.lam == pytest.approx(0.3, abs=1e-12)
    assert tuned.ppi.value == pytest.approx(0.55, abs=1e-12)
    assert (tuned.ppi.low, tuned.ppi.high) == pytest.approx((0.1891, 0.9109), abs=1e-4)
    assert tuned.gold.value == pytest.approx(0.625, abs=1e-12)
    assert tuned.bias.value == pytest.approx(0.125, abs=1e-12)
    assert (tuned.gold_queries, tuned.other_queries) == (4, 5)


def _world(seed: int, n: int, big_n: int, grades: bool):
    """Per-query values of a metric under human and machine judgments: graded values tie a
    lot (a metric over few relevant items), the judge biased upward and noisy."""
    rng = np.random.default_rng(seed)
    size = n + big_n
    h = rng.integers(0, 5, size) / 4 if grades else rng.beta(2, 3, size)
    a = np.clip(h + 0.08 + rng.normal(0, 0.12, size), 0, 1)
    if grades:
        a = np.round(a * 4) / 4
    gold = rng.permutation(size)[:n]
    other = np.setdiff1d(np.arange(size), gold)
    return h[gold], a[gold], a[other]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_equals_ppi_py(seed, lam, level):
    n, big_n = (30, 300) if seed % 2 else (120, 40)
    h, a_gold, a_other = _world(seed, n, big_n, grades=seed % 3 == 0)
    ours = ppi_mean(h, a_gold, a_other, level, lam)
    point = ppi_mean_pointestimate(h, a_gold, a_other, lam=lam)
    low, high = ppi_mean_ci(h, a_gold, a_other, alpha=1 - level, lam=lam)
    assert ours.ppi.value == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    assert (ours.ppi.low, ours.ppi.high) == pytest.approx(
        (float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    gold_low, gold_high = classical_mean_ci(h, alpha=1 - level)
    assert (ours.gold.low, ours.gold.high) == pytest.approx((gold_low, gold_high), abs=1e-9)
    if lam is None:  # the tuned weight is ppi_py's: the lam it would use gives the same point
        again = ppi_mean_pointestimate(h, a_gold, a_other, lam=ours.lam)
        assert float(np.squeeze(again)) == pytest.approx(ours.ppi.value, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_paired_differences_equal_ppi_py(seed):
    """A comparison of two runs: the same estimator on per-query differences."""
    h_a, a_gold_a, a_other_a = _world(seed, 80, 400, grades=False)
    h_b, a_gold_b, a_other_b = _world(seed + 100, 80, 400, grades=False)
    ours = ppi_mean(h_b - h_a, a_gold_b - a_gold_a, a_other_b - a_other_a)
    low, high = ppi_mean_ci(h_b - h_a, a_gold_b - a_gold_a, a_other_b - a_other_a, alpha=0.05)
    assert (ours.ppi.low, ours.ppi.high) == pytest.approx(
        (float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    z = ours.ppi.value / ours.ppi.se
    assert ours.ppi.p_value() == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), abs=1e-12)


def test_coverage_by_simulation():
    """2,000 worlds of 500 queries, 100 gold drawn uniformly, per-query values from Beta(2, 3)
    (mean 0.4), a judge biased by +0.08 with noise 0.12: the 95% PPI++ interval covers the
    distribution's mean in 93-97% of the worlds and the 500 queries' own mean at least as
    often; the machine-only interval almost never; PPI++ is narrower than gold alone. (2,000
    worlds: a correct interval's coverage then lies within 0.95 +- 0.01 with 95% chance.)"""
    rng = np.random.default_rng(2026)
    worlds, size, n = 2000, 500, 100
    covered = {"ppi": 0, "own": 0, "classic": 0, "gold": 0, "machine": 0}
    widths = {"ppi": [], "classic": [], "gold": []}
    for _ in range(worlds):
        h = rng.beta(2, 3, size)
        a = h + 0.08 + rng.normal(0, 0.12, size)
        gold = rng.permutation(size)[:n]
        other = np.setdiff1d(np.arange(size), gold)
        tuned = ppi_mean(h[gold], a[gold], a[other])
        classic = ppi_mean(h[gold], a[gold], a[other], lam=1)
        for name, est in (("ppi", tuned.ppi), ("classic", classic.ppi), ("gold", tuned.gold),
                          ("machine", tuned.machine)):
            covered[name] += est.low <= 0.4 <= est.high
        covered["own"] += tuned.ppi.low <= h.mean() <= tuned.ppi.high
        for name, est in (("ppi", tuned.ppi), ("classic", classic.ppi), ("gold", tuned.gold)):
            widths[name].append(est.high - est.low)
    share = {k: v / worlds for k, v in covered.items()}
    assert 0.93 <= share["ppi"] <= 0.97, share
    # the gold sample alone: its 100 values' spread, n in the denominator as ppi_py has it,
    # undercovers a little
    assert 0.93 <= share["classic"] <= 0.97 and 0.92 <= share["gold"] <= 0.97, share
    assert share["own"] >= 0.95 and share["machine"] < 0.05, share
    assert np.mean(widths["ppi"]) < np.mean(widths["gold"]), widths
    assert np.mean(widths["ppi"]) <= np.mean(widths["classic"]) + 1e-12


def test_effective_gold_is_the_gold_count_of_the_same_width():
    h, a_gold, a_other = _world(3, 100, 2000, grades=False)
    est = ppi_mean(h, a_gold, a_other)
    assert est.effective_gold > est.gold_queries  # a good judge is worth more gold queries
    same = math.sqrt(float(np.var(h)) / est.effective_gold)
    assert same == pytest.approx(est.ppi.se, rel=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("half_width", [0.02, 0.05, 0.1])
def test_gold_needed_is_the_least_that_reaches_the_width(seed, half_width):
    """By brute force over every split of the same queries into gold and other."""
    h, a_gold, a_other = _world(seed, 60, 900, grades=False)
    alone, ppi = gold_needed(h, a_gold, a_other, half_width)
    z = 1.959963984540054
    every = np.concatenate([a_gold, a_other])
    var_a = float(np.var(every))
    total = len(h) + len(a_other)
    cov = float(np.cov(h, a_gold, ddof=0)[0, 1])

    def width(m: int) -> float:  # PPI++'s weight tuned for m gold queries of the total
        lam = min(1.0, max(0.0, cov / ((1 + m / (total - m)) * float(np.var(every, ddof=1)))))
        var_r = float(np.var(h - lam * a_gold))
        return z * math.sqrt(lam**2 * var_a / (total - m) + var_r / m)

    fits = [m for m in range(2, total) if width(m) <= half_width]
    lam_now = min(1.0, max(0.0, cov / ((1 + len(h) / len(a_other))
                                       * float(np.var(every, ddof=1)))))
    assert (ppi if math.isfinite(ppi) else None) == (fits[0] if fits else None)
    need = z * math.sqrt(float(np.var(h))) / half_width
    assert alone == math.ceil(need**2)
    assert lam_now == pytest.approx(tuned_lambda(h, a_gold, a_other))
    # the machine judgments never cost gold: PPI reaches the width wherever gold alone does
    assert not math.isfinite(alone) or ppi <= alone


def test_undefined_where_the_sample_cannot_say():
    one = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert math.isnan(one.ppi.value) and math.isnan(one.gold.value) and math.isnan(one.lam)
    assert one.machine.value == pytest.approx(2 / 3)
    no_other = ppi_mean([1.0, 0.0], [1.0, 0.5], [])
    assert math.isnan(no_other.ppi.value) and no_other.gold.value == 0.5
    flat = ppi_mean([1.0, 0.0, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5])
    assert flat.lam == 0.0 and flat.ppi.value == pytest.approx(0.5)  # the gold mean
    with pytest.raises(OptionError):
        ppi_mean(H, A_GOLD, A_OTHER, lam=1.5)
    with pytest.raises(OptionError):
        gold_needed(H, A_GOLD, A_OTHER, 0.0)
