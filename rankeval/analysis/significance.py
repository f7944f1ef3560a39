"""Paired significance tests, confidence intervals and corrections, vectorized over users.

Every function takes per-user values already paired (the same users, in the same order). The
randomization and bootstrap tests draw from ``numpy.random.default_rng(seed)`` in fixed-size
batches, so a seed gives the same answer on every machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankeval.analysis.choices import CORRECTIONS, FAMILIES, TESTS

_BATCH_CELLS = 4_000_000  # values drawn per batch: bounds memory whatever the number of users


@dataclass(frozen=True)
class Comparison:
    """B against A on one metric, over n paired users (delta = mean(B - A))."""

    n: int
    mean_a: float
    mean_b: float
    delta: float
    p_value: float
    effect_size: float  # Cohen's d for paired samples: mean(diff) / sd(diff)
    ci_low: float
    ci_high: float
    wins: int  # users where B > A
    ties: int
    losses: int


def _batches(rounds: int, n: int):
    size = max(1, min(rounds, _BATCH_CELLS // max(n, 1)))
    done = 0
    while done < rounds:
        take = min(size, rounds - done)
        yield take
        done += take


def randomization_p(diff: np.ndarray, rounds: int, seed: int) -> float:
    """Two-sided paired randomization test: flip the sign of each user's difference."""
    n = len(diff)
    observed = abs(diff.mean()) if n else 0.0
    if n == 0 or not np.any(diff):
        return 1.0
    rng = np.random.default_rng(seed)
    extreme = 0
    tol = 1e-12 * max(1.0, observed)
    for take in _batches(rounds, n):
        signs = rng.integers(0, 2, size=(take, n), dtype=np.int8) * 2 - 1
        means = np.abs(signs @ diff) / n
        extreme += int(np.count_nonzero(means >= observed - tol))
    return (extreme + 1) / (rounds + 1)


def bootstrap(
    diff: np.ndarray, rounds: int, seed: int, level: float
) -> tuple[float, float, float]:
    """Paired bootstrap of the mean difference: (p-value, CI low, CI high).

    The p-value resamples the centred differences (the null of no difference); the interval is
    the percentile interval of the resampled means.
    """
    n = len(diff)
    if n == 0:
        return 1.0, math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(rounds)
    at = 0
    for take in _batches(rounds, n):
        idx = rng.integers(0, n, size=(take, n))
        means[at : at + take] = diff[idx].mean(axis=1)
        at += take
    observed = diff.mean()
    centred = means - observed
    tol = 1e-12 * max(1.0, abs(observed))
    extreme = int(np.count_nonzero(np.abs(centred) >= abs(observed) - tol))
    p = 1.0 if not np.any(diff) else (extreme + 1) / (rounds + 1)
    alpha = 1 - level
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return p, float(low), float(high)


def t_test(diff: np.ndarray, level: float) -> tuple[float, float, float]:
    """Paired t-test (scipy) and the t interval of the mean difference."""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    n = len(diff)
    if n < 2 or not np.any(diff - diff[0]):  # no spread: the test is undefined
        d = float(diff.mean()) if n else 0.0
        return (1.0 if d == 0 else 0.0), d, d
    result = stats.ttest_1samp(diff, 0.0)
    low, high = result.confidence_interval(level)
    return float(result.pvalue), float(low), float(high)


def wilcoxon_p(diff: np.ndarray) -> float:
    """Wilcoxon signed-rank test (scipy; zero differences dropped, as Wilcoxon did)."""
    from scipy import stats  # import cost: scipy (~0.3 s), only when a test is run

    if not np.any(diff):
        return 1.0
    return float(stats.wilcoxon(diff).pvalue)


def compare(
    a: np.ndarray,
    b: np.ndarray,
    test: str = "t",
    rounds: int = 10_000,
    seed: int = 0,
    level: float = 0.95,
) -> Comparison:
    """Everything about B versus A on paired per-user values."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}")
    diff = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(diff)
    if not n:  # no pair: every number is undefined (SPEC section 9), never 0 or p = 1
        nan = math.nan
        return Comparison(n=0, mean_a=nan, mean_b=nan, delta=nan, p_value=nan,
                          effect_size=nan, ci_low=nan, ci_high=nan, wins=0, ties=0, losses=0)
    if test == "t":
        p, low, high = t_test(diff, level)
    else:  # the interval is the bootstrap's; the p-value is the chosen test's
        p, low, high = bootstrap(diff, rounds, seed, level)
        if test == "randomization":
            p = randomization_p(diff, rounds, seed)
        elif test == "wilcoxon":
            p = wilcoxon_p(diff)
    sd = float(diff.std(ddof=1)) if n > 1 else 0.0
    delta = float(diff.mean())
    effect = delta / sd if sd > 0 else 0.0
    tol = 1e-12
    return Comparison(
        n=n,
        mean_a=float(np.mean(a)),
        mean_b=float(np.mean(b)),
        delta=delta,
        p_value=p,
        effect_size=effect,
        ci_low=low,
        ci_high=high,
        wins=int(np.count_nonzero(diff > tol)),
        ties=int(np.count_nonzero(np.abs(diff) <= tol)),
        losses=int(np.count_nonzero(diff < -tol)),
    )


def correct(p_values: list[float], method: str) -> list[float]:
    """Adjusted p-values: Holm-Bonferroni (step-down), Bonferroni, Benjamini-Hochberg or
    Benjamini-Yekutieli (false discovery rate, step-up), or none. Undefined (NaN) p-values
    stay undefined and are not counted in the family."""
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}")
    p_all = np.asarray(p_values, dtype=np.float64)
    defined = np.isfinite(p_all)
    if not defined.all():  # an undefined test stays undefined and is not counted
        out = np.full(len(p_all), np.nan)
        out[defined] = correct(p_all[defined].tolist(), method)
        return out.tolist()
    m = len(p_all)
    p = p_all
    if method == "none" or m == 0:
        return p.tolist()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0).tolist()
    adjusted = np.empty(m)
    if method in ("bh", "by"):  # step-up: from the largest p down, p_(i) m / i, running min
        order = np.argsort(p, kind="stable")[::-1]
        scale = m / np.arange(m, 0, -1)
        if method == "by":
            scale *= float(np.sum(1.0 / np.arange(1, m + 1)))
        adjusted[order] = np.minimum(np.minimum.accumulate(p[order] * scale), 1.0)
        return adjusted.tolist()
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted.tolist()


def correct_within(p_values: list[float], families: list, method: str) -> list[float]:
    """Adjusted p-values, each family corrected alone (``families[i]``: the family of
    ``p_values[i]``, any hashable; ``correct`` over each)."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p), np.nan)
    index = {f: i for i, f in enumerate(dict.fromkeys(families))}
    keys = np.asarray([index[f] for f in families], dtype=np.int64)
    for key in range(len(index)):  # one pass per family, not per test
        members = keys == key
        out[members] = correct(p[members].tolist(), method)
    return out.tolist()


def family_of(metric: str, across: str) -> str:
    """The family of a test of ``metric`` when corrections span ``across`` (``FAMILIES``):
    the metric itself (``pairs``), or one family for every metric and K (``metrics``)."""
    if across not in FAMILIES:
        raise ValueError(f"correct_across must be one of {', '.join(FAMILIES)}")
    return metric if across == "pairs" else ""


def bootstrap_mean_ci(
    values: np.ndarray, rounds: int, seed: int, level: float
) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean (``score --ci``)."""
    _, low, high = bootstrap(np.asarray(values, dtype=np.float64), rounds, seed, level)
    return low, high
