"""Sampled metrics and their corrections (Krichene and Rendle, KDD 2020): when each held-out
item was ranked among m sampled negatives instead of the whole catalogue of n candidates,
the metric on that short list (the sampled metric) is a biased estimate of the metric on the
full ranking, and can even order two runs the wrong way.

An instance is one held-out item with its rank r among the m + 1 (1 = top). Its true rank R
among the n candidates is unknown; given R, r - 1 counts the sampled negatives that outrank
the item: hypergeometric (negatives drawn without replacement, the default) or binomial
(with replacement, the paper's model), with p = (R - 1) / (n - 1). A correction is a table
M[r] from the sampled rank to an estimate of the full metric, averaged over instances:

- ``rank_estimate``: M(R_hat), R_hat = 1 + floor((r - 1)(n - 1) / m), the expected true rank
  of the item (unbiased for R; the metric of it is not);
- ``bv``: the table minimising squared bias plus ``gamma`` times the variance, over a
  uniform prior on R: ((1 - g) A'A + g diag(c))^-1 A'b, A[R, r] = sqrt(pi(R)) p(r | R),
  b[R] = sqrt(pi(R)) M(R), c[r] = sum_R pi(R) p(r | R); ``gamma=0`` is the least-bias table,
  ``gamma=1`` the posterior mean.

Above ``EXACT`` candidates the prior's sum over R runs over every rank to ``EXACT`` and a
grid beyond it (each grid point weighted by the ranks it stands for).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankeval.analysis.choices import MAX_CANDIDATES, MAX_NEGATIVES
from rankeval.errors import OptionError

EXACT = 20_000
METRICS = ("hit_rate", "precision", "ndcg", "mrr", "auc")


def metric(name: str, k: int | None, rank: np.ndarray, n: int) -> np.ndarray:
    """A one-relevant-item metric of the rank(s) ``rank`` among ``n`` candidates."""
    r = np.asarray(rank, dtype=np.float64)
    inside = np.ones_like(r, dtype=bool) if k is None else r <= k
    if name == "hit_rate":
        return inside.astype(np.float64)
    if name == "precision":
        return inside / (k if k is not None else n)
    if name == "ndcg":
        return np.where(inside, 1.0 / np.log2(r + 1.0), 0.0)
    if name == "mrr":
        return np.where(inside, 1.0 / r, 0.0)
    if name == "auc":
        return (n - r) / max(n - 1, 1)
    raise OptionError(f"unknown sampled metric {name!r}; known: {', '.join(METRICS)}")


def _ranks(n: int) -> tuple[np.ndarray, np.ndarray]:
    """True ranks R and their prior weights (uniform over 1..n): every rank up to EXACT,
    then a grid, each point weighted by the ranks it stands for."""
    if n <= EXACT:
        return np.arange(1, n + 1, dtype=np.float64), np.full(n, 1.0 / n)
    head = np.arange(1, EXACT + 1, dtype=np.float64)
    tail = np.unique(np.linspace(EXACT + 1, n, EXACT).round())
    edges = np.concatenate([[EXACT + 0.5], (tail[1:] + tail[:-1]) / 2, [n + 0.5]])
    return np.concatenate([head, tail]), np.concatenate([np.ones(EXACT),
                                                         np.diff(edges)]) / n


def sampled_pmf(true_rank: np.ndarray, n: int, m: int, replacement: bool) -> np.ndarray:
    """P(sampled rank = r | true rank R), rows R, columns r = 1..m + 1."""
    from scipy.stats import binom

    above = np.arange(m + 1)[None, :]
    worse = (np.asarray(true_rank)[:, None] - 1).astype(np.int64)
    if replacement:
        return np.asarray(binom.pmf(above, m, worse / max(n - 1, 1)))
    return _hypergeometric(np.asarray(true_rank, dtype=np.float64) - 1, n - 1, m)


def _hypergeometric(above: np.ndarray, pool: int, m: int) -> np.ndarray:
    """P(k of the ``m`` negatives drawn from ``pool`` outrank the item | ``above`` of the pool
    do), k = 0..m, one row per value of ``above``: C(m, k) [K]_k [M-K]_(m-k) / [M]_m, as
    sums of logs of ratios near 1 (``log1p``), exact to ~1e-12 for any pool below 2^53 and
    ~100x faster than scipy's hypergeom, whose time grows with the pool (minutes at 10^5,
    hours past 10^9)."""
    from scipy.special import gammaln

    big_k, big_m = above[:, None], float(pool)
    i = np.arange(m, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore"):  # log(0): a draw that cannot happen
        # [K]_k / prod_{u=1..k} (M - m + u), and prod_{j<m-k} (M - K - j) / (M - j)
        hits = np.log(np.maximum(big_k - i, 0.0) / (big_m - m + 1 + i))
        misses = np.log1p(-np.minimum(big_k / (big_m - i), 1.0))
    zero = np.zeros((len(above), 1))
    log_p = np.concatenate([zero, np.cumsum(hits, axis=1)], axis=1)
    log_p += np.concatenate([zero, np.cumsum(misses, axis=1)], axis=1)[:, ::-1]
    k = np.arange(m + 1)
    log_p += (gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1))[None, :]
    return np.exp(log_p)


def table(name: str, k: int | None, n: int, m: int, how: str, gamma: float = 0.1,
          replacement: bool = False) -> np.ndarray:
    """The correction's table M[r], r = 1..m + 1 (index r - 1)."""
    r = np.arange(1, m + 2, dtype=np.float64)
    if how == "sampled":
        return metric(name, k, r, m + 1)
    if how == "rank_estimate":
        return metric(name, k, 1 + np.floor((r - 1) * (n - 1) / m), n)
    if how != "bv":
        raise OptionError(f"unknown correction {how!r}")
    ranks, prior = _ranks(n)
    p = sampled_pmf(ranks, n, m, replacement)
    a = np.sqrt(prior)[:, None] * p
    b = np.sqrt(prior) * metric(name, k, ranks, n)
    c = prior @ p
    lhs = (1 - gamma) * (a.T @ a) + gamma * np.diag(c)
    return np.linalg.lstsq(lhs, a.T @ b, rcond=None)[0]


@dataclass(frozen=True)
class Estimates:
    """One run's metric under each estimator: mean over instances of the table at r."""

    name: str
    instances: int
    values: dict[str, dict[str, float]]  # metric -> estimator -> value

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "instances": self.instances,
                "values": {m: {e: (v if math.isfinite(v) else None) for e, v in by.items()}
                           for m, by in self.values.items()}}


@dataclass(frozen=True)
class SampledResult:
    """Every run's estimates, the setting they rest on, and the pairs of runs whose order
    the correction reverses."""

    runs: list[Estimates]
    candidates: int
    negatives: int
    gamma: float
    replacement: bool
    flips: list[tuple[str, str, str, str]] = field(default_factory=list)  # metric, a, b, est
    ties: str | None = None  # how tied scores were ranked (runs of scores), else None
    warnings: list[str] = field(default_factory=list)  # what the inputs left out, with counts

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "negatives": self.negatives,
                "gamma": self.gamma, "sampling": "with replacement" if self.replacement
                else "without replacement", "ties": self.ties,
                "runs": [r.to_dict() for r in self.runs],
                "flips": [{"metric": m, "runs": [a, b], "estimator": e}
                          for m, a, b, e in self.flips], "warnings": list(self.warnings)}

    def __repr__(self) -> str:
        lines = [f"SampledResult({len(self.runs)} run(s), {self.negatives:,} negatives of "
                 f"{self.candidates:,} candidates)"]
        for r in self.runs:
            shown = ", ".join(f"{m}: sampled {v['sampled']:.4g}, bv {v['bv']:.4g}"
                              for m, v in r.values.items())
            lines.append(f"  {r.name} ({r.instances:,} items): {shown}")
        return "\n".join(lines)


ESTIMATORS = ("sampled", "rank_estimate", "bv")


Ranks = np.ndarray | tuple[np.ndarray, np.ndarray]


def estimate(ranks: dict[str, Ranks], metrics: list[tuple[str, int | None]], n: int,
             m: int, gamma: float = 0.1, replacement: bool = False) -> SampledResult:
    """Each run's sampled metrics and corrections, from its instances' sampled ranks: one
    rank each, or a range (lowest, highest) for an item tied with negatives, whose value is
    the mean over the range (the expectation over the tie's orders)."""
    check_sizes(n, m)
    if not 0 <= gamma <= 1:
        raise OptionError(f"gamma must lie in [0, 1], got {gamma}")
    tables = {(name, k, how): table(name, k, n, m, how, gamma, replacement)
              for name, k in metrics for how in ESTIMATORS}
    runs = []
    for run, given in ranks.items():
        low, high = given if isinstance(given, tuple) else (given, given)
        for r in (low, high):
            if len(r) and (r.min() < 1 or r.max() > m + 1):
                raise OptionError(f"{run}: sampled ranks must lie in 1..{m + 1} (the item and "
                                  f"{m:,} negatives), got {int(r.min())}..{int(r.max())}")
        runs.append(Estimates(run, len(low), {
            _label(name, k): {how: _mean(tables[name, k, how], low, high)
                              for how in ESTIMATORS} for name, k in metrics}))
    flips = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            for label in a.values:
                naive = np.sign(a.values[label]["sampled"] - b.values[label]["sampled"])
                for how in ESTIMATORS[1:]:
                    if np.sign(a.values[label][how] - b.values[label][how]) * naive < 0:
                        flips.append((label, a.name, b.name, how))
    return SampledResult(runs, n, m, gamma, replacement, flips)


def check_sizes(n: int, m: int | None) -> None:
    """The candidates and negatives within their bounds, and more candidates than negatives
    (``m`` None: read from the runs later)."""
    if not 2 <= n <= MAX_CANDIDATES:
        raise OptionError(f"{{option}} must be a whole number from 2 to {MAX_CANDIDATES:,}, "
                          f"got {n:,}", "candidates")
    if m is None:
        return
    if not 1 <= m <= MAX_NEGATIVES:
        raise OptionError(f"{{option}} must be a whole number from 1 to {MAX_NEGATIVES:,}, "
                          f"got {m:,}", "negatives")
    if n < m + 1:
        raise OptionError(f"the candidates ({n:,}) must outnumber the sampled negatives "
                          f"({m:,})")


def _mean(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> float:
    """The mean over instances of each one's mean of ``values`` (index rank - 1) over its
    ranks low..high."""
    if not len(low):
        return math.nan
    cum = np.concatenate([[0.0], np.cumsum(values)])
    lo, hi = low.astype(np.int64), high.astype(np.int64)
    return float(((cum[hi] - cum[lo - 1]) / (hi - lo + 1)).mean())


def _label(name: str, k: int | None) -> str:
    return name if k is None else f"{name}@{k}"
