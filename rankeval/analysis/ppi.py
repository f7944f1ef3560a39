"""Prediction-powered inference (SPEC §12): a metric's mean over every query, from machine
judgments of every query and human (gold) judgments of a uniform random sample of them.

For a metric, ``h`` holds its values under the gold judgments (the gold queries ``G``, n of
them) and ``a`` its values under the machine judgments, on the same queries (``a_gold``) and
on the others (``a_other``, N of them). With a weight ``lam``:

    estimate  = lam * mean(a_other) + mean(h - lam * a_gold)
    variance  = lam^2 * var(a_other) / N + var(h - lam * a_gold) / n

and the interval is the estimate +- z * sqrt(variance) (variances over n and N, as
``ppi_py``, the reference, has them). PPI++ (Angelopoulos, Duchi and Zrnic, 2023) tunes
``lam = cov(h, a_gold) / ((1 + n / N) * var(a))``, ``var(a)`` over every query with ``n + N - 1``
in the denominator, clipped to [0, 1]: ``lam = 1`` is classic PPI, ``lam = 0`` the gold sample
alone. The same estimator of per-query differences between two runs compares them.

Numbers in, numbers out: arrays of per-query values, no files, no metrics by name. An estimate
that needs what is missing (fewer than two gold queries, no other query) is NaN, the state the
reports show as undefined.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from rankeval.errors import OptionError


@dataclass(frozen=True)
class Interval:
    """An estimate with its standard error and its two-sided interval at ``level``."""

    value: float
    se: float
    low: float
    high: float

    @classmethod
    def normal(cls, value: float, se: float, level: float) -> Interval:
        half = _z(level) * se
        return cls(value, se, value - half, value + half)

    def p_value(self, null: float = 0.0) -> float:
        """Two-sided p-value of the z-test of ``value == null``."""
        if not self.se > 0:
            return math.nan if not math.isfinite(self.value) or self.value == null else 0.0
        return 2 * NormalDist().cdf(-abs(self.value - null) / self.se)


UNDEFINED = Interval(math.nan, math.nan, math.nan, math.nan)


@dataclass(frozen=True)
class PPIEstimate:
    """One metric's mean over every query, four ways, and what the machine judgments were
    worth: ``ppi`` (PPI++ with ``lam``, or the fixed ``lam`` asked for), ``gold`` (the gold
    queries alone), ``machine`` (the machine judgments alone, every query: biased when the
    judge is), the judge's ``bias`` (``mean(a_gold - h)``: positive, the judge overrates),
    and ``effective_gold``: how many gold queries alone would give the PPI interval's width."""

    ppi: Interval
    lam: float
    gold: Interval
    machine: Interval
    bias: Interval
    gold_queries: int
    other_queries: int
    effective_gold: float
    # stratified PPI (``stratified_ppi_mean``): each stratum's part; ``lam`` is then NaN
    strata: tuple[Stratum, ...] = ()


@dataclass(frozen=True)
class Stratum:
    """One stratum of a stratified estimate: its name, its share ``weight`` of every query,
    its gold and other queries, its own weight ``lam`` and its own PPI estimate."""

    name: str
    weight: float
    gold_queries: int
    other_queries: int
    lam: float
    ppi: Interval

    @property
    def rate(self) -> float:
        """The share of the stratum's queries in the gold sample."""
        return self.gold_queries / (self.gold_queries + self.other_queries)


def tuned_lambda(h: np.ndarray, a_gold: np.ndarray, a_other: np.ndarray) -> float:
    """PPI++'s power-tuning weight, clipped to [0, 1]; 0 when the machine values do not vary
    (they then carry nothing the gold sample lacks)."""
    n, big_n = len(h), len(a_other)
    if n < 2 or big_n < 1:
        return math.nan
    cov = float(np.mean((h - h.mean()) * (a_gold - a_gold.mean())))
    var = float(np.var(np.concatenate([a_gold, a_other]), ddof=1))
    if not var > 0:
        return 0.0
    return min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))


def ppi_mean(h, a_gold, a_other, level: float = 0.95, lam: float | None = None
             ) -> PPIEstimate:
    """The estimates of SPEC §12 from per-query values: ``h`` and ``a_gold`` on the gold
    queries (in the same order), ``a_other`` on the other queries. ``lam`` None: PPI++."""
    h, a_gold, a_other = (np.asarray(x, dtype=np.float64) for x in (h, a_gold, a_other))
    if len(h) != len(a_gold):
        raise ValueError("h and a_gold must hold the same queries")
    if lam is not None and not 0 <= lam <= 1:
        raise OptionError(f"{{option}} must lie in [0, 1], got {lam}", "ppi_lambda")
    n, big_n = len(h), len(a_other)
    every = np.concatenate([a_gold, a_other])
    machine = (Interval.normal(float(every.mean()), float(every.std() / math.sqrt(len(every))),
                               level) if len(every) else UNDEFINED)
    if n < 2:
        return PPIEstimate(UNDEFINED, math.nan, UNDEFINED, machine, UNDEFINED, n, big_n,
                           math.nan)
    gold = Interval.normal(float(h.mean()), float(h.std() / math.sqrt(n)), level)
    diff = a_gold - h
    bias = Interval.normal(float(diff.mean()), float(diff.std() / math.sqrt(n)), level)
    if big_n < 1:
        return PPIEstimate(UNDEFINED, math.nan, gold, machine, bias, n, big_n, math.nan)
    weight = tuned_lambda(h, a_gold, a_other) if lam is None else float(lam)
    rectified = h - weight * a_gold
    value = weight * float(a_other.mean()) + float(rectified.mean())
    variance = weight**2 * float(a_other.var()) / big_n + float(rectified.var()) / n
    ppi = Interval.normal(value, math.sqrt(variance), level)
    effective = n * gold.se**2 / variance if variance > 0 else math.nan
    return PPIEstimate(ppi, weight, gold, machine, bias, n, big_n, effective)


def stratified_ppi_mean(h, a_gold, a_other, gold_strata, other_strata, level: float = 0.95,
                        lam: float | None = None) -> PPIEstimate:
    """Stratified PPI (Fisch et al., NeurIPS 2024): the gold sample drawn uniformly within
    each stratum, at rates that may differ. Each stratum ``k`` (``gold_strata`` and
    ``other_strata`` name each query's) gets SPEC §12's estimate ``theta_k`` with its own
    PPI++ weight ``lam_k`` (or the fixed ``lam``) and variance ``v_k``; with ``w_k`` the
    stratum's share of every query,

        estimate = sum_k w_k * theta_k,   variance = sum_k w_k^2 * v_k.

    The gold-only estimate and the judge's bias are the same weighted sums of their
    per-stratum means (their variances likewise); the machine-only mean is over every query
    (it samples nothing). One stratum: ``ppi_mean`` exactly. A stratum of fewer than two gold
    queries has no variance: everything but the machine mean is then undefined (NaN); one
    without other queries is its gold mean (``lam_k`` 0)."""
    h, a_gold, a_other = (np.asarray(x, dtype=np.float64) for x in (h, a_gold, a_other))
    gold_strata, other_strata = np.asarray(gold_strata), np.asarray(other_strata)
    if len(h) != len(a_gold) or len(h) != len(gold_strata) or len(a_other) != len(
            other_strata):
        raise ValueError("each query needs its values and its stratum")
    names = np.unique(np.concatenate([gold_strata, other_strata]))
    every = np.concatenate([a_gold, a_other])
    machine = Interval.normal(float(every.mean()), float(every.std() / math.sqrt(len(every))),
                              level)
    z = _z(level)
    parts, sums = [], np.zeros((3, 2))  # (ppi, gold, bias) x (value, variance)
    for name in names:
        g, o = gold_strata == name, other_strata == name
        n, big_n = int(g.sum()), int(o.sum())
        weight = (n + big_n) / len(every)
        if n < 2:
            return PPIEstimate(UNDEFINED, math.nan, UNDEFINED, machine, UNDEFINED, len(h),
                               len(a_other), math.nan)
        part = (ppi_mean(h[g], a_gold[g], a_other[o], level, lam) if big_n
                else _gold_alone(h[g], a_gold[g], level))
        parts.append(Stratum(str(name), weight, n, big_n, part.lam, part.ppi))
        for row, est in enumerate((part.ppi, part.gold, part.bias)):
            sums[row] += weight * est.value, weight**2 * est.se**2
    ppi, gold, bias = (Interval(v, math.sqrt(var), v - z * math.sqrt(var),
                                v + z * math.sqrt(var)) for v, var in sums)
    effective = len(h) * sums[1, 1] / sums[0, 1] if sums[0, 1] > 0 else math.nan
    return PPIEstimate(ppi, parts[0].lam if len(parts) == 1 else math.nan, gold, machine, bias,
                       len(h), len(a_other), effective, tuple(parts))


def _gold_alone(h: np.ndarray, a_gold: np.ndarray, level: float) -> PPIEstimate:
    """A stratum whose every query is gold: its gold mean is its PPI estimate."""
    gold = Interval.normal(float(h.mean()), float(h.std() / math.sqrt(len(h))), level)
    diff = a_gold - h
    bias = Interval.normal(float(diff.mean()), float(diff.std() / math.sqrt(len(h))), level)
    return PPIEstimate(gold, 0.0, gold, gold, bias, len(h), 0, float(len(h)))


def gold_needed(h, a_gold, a_other, half_width: float, level: float = 0.95,
                lam: float | None = None) -> tuple[float, float]:
    """How many gold queries (of the same query set) the observed variances call for to reach
    an interval of ``half_width``: (gold alone, PPI). The total number of queries stays
    n + N, so a gold query more is an unlabeled one fewer; PPI++ tunes its weight for each
    number of gold queries (a fixed ``lam`` stays fixed); NaN where even judging every
    query by hand would not reach it, or where the sample gives no variance to plan from."""
    if not half_width > 0:
        raise OptionError(f"{{option}} must be above 0, got {half_width}", "gold_plan")
    h, a_gold, a_other = (np.asarray(x, dtype=np.float64) for x in (h, a_gold, a_other))
    n, total = len(h), len(h) + len(a_other)
    if n < 2 or len(a_other) < 1:
        return math.nan, math.nan
    z = _z(level)
    var_h = float(h.var())
    alone = math.ceil((z * math.sqrt(var_h) / half_width) ** 2) if var_h > 0 else 2
    every = np.concatenate([a_gold, a_other])
    var_a, cov = float(every.var()), float(np.mean((h - h.mean()) * (a_gold - a_gold.mean())))
    sizes = np.arange(2, total, dtype=np.float64)  # gold queries; the rest unlabeled
    if lam is not None:
        weight = np.full_like(sizes, float(lam))
    else:  # PPI++ at each size: its own tuned weight (never worse than the gold alone)
        spread = float(every.var(ddof=1))
        weight = (np.clip(cov / ((1 + sizes / (total - sizes)) * spread), 0, 1)
                  if spread > 0 else np.zeros_like(sizes))
    var_r = var_h - 2 * weight * cov + weight**2 * float(a_gold.var())  # var(h - w a_gold)
    width = z * np.sqrt(weight**2 * var_a / (total - sizes) + var_r / sizes)
    reached = np.flatnonzero(width <= half_width)
    ppi = float(sizes[reached[0]]) if len(reached) else math.nan
    return (float(alone) if alone <= total else math.nan), ppi


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise OptionError(f"{{option}} must lie in (0, 1), got {level}", "confidence")
    return NormalDist().inv_cdf(0.5 + level / 2)
