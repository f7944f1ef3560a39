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
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from rankeval.analysis.equivalence import Margin, Verdict
from rankeval.analysis.gates import lower_better
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


@dataclass(frozen=True)
class Moments:
    """What PPI needs of a set of queries, mergeable over partitions (Chan, Golub and
    LeVeque's pairwise update: exact for a constant, no sum-of-squares cancellation): their
    number, the means of ``h`` (gold values) and ``a`` (machine values), the sums of squared
    deviations ``m2_h``, ``m2_a`` and the co-moment ``c_ha``. The unlabelled queries have no
    ``h``: its fields stay 0."""

    n: int = 0
    mean_h: float = 0.0
    mean_a: float = 0.0
    m2_h: float = 0.0
    m2_a: float = 0.0
    c_ha: float = 0.0

    @classmethod
    def of(cls, h, a) -> Moments:
        """From per-query values (``h`` None: unlabelled queries)."""
        a = np.asarray(a, dtype=np.float64)
        if not len(a):
            return cls()
        da = a - a.mean()
        if h is None:
            return cls(len(a), 0.0, float(a.mean()), 0.0, float(np.sum(da * da)), 0.0)
        h = np.asarray(h, dtype=np.float64)
        if len(h) != len(a):
            raise ValueError("h and a_gold must hold the same queries")
        dh = h - h.mean()
        return cls(len(a), float(h.mean()), float(a.mean()), float(np.sum(dh * dh)),
                   float(np.sum(da * da)), float(np.sum(dh * da)))

    def __add__(self, other: Moments) -> Moments:
        if not other.n:
            return self
        if not self.n:
            return other
        n = self.n + other.n
        dh, da = other.mean_h - self.mean_h, other.mean_a - self.mean_a
        w = self.n * other.n / n
        return Moments(n, self.mean_h + dh * other.n / n, self.mean_a + da * other.n / n,
                       self.m2_h + other.m2_h + dh * dh * w,
                       self.m2_a + other.m2_a + da * da * w,
                       self.c_ha + other.c_ha + dh * da * w)

    @property
    def var_h(self) -> float:
        return self.m2_h / self.n if self.n else math.nan

    @property
    def var_a(self) -> float:
        return self.m2_a / self.n if self.n else math.nan

    @property
    def cov(self) -> float:
        return self.c_ha / self.n if self.n else math.nan

    def var_of(self, x: float, y: float) -> float:
        """The variance of ``x * h + y * a`` (never below 0)."""
        return max(0.0, x * x * self.var_h + 2 * x * y * self.cov + y * y * self.var_a)

    def machine(self) -> Moments:
        """The machine values alone (as unlabelled queries)."""
        return Moments(self.n, 0.0, self.mean_a, 0.0, self.m2_a, 0.0)


def tuned_lambda(h: np.ndarray, a_gold: np.ndarray, a_other: np.ndarray) -> float:
    """PPI++'s power-tuning weight, clipped to [0, 1]; 0 when the machine values do not vary
    (they then carry nothing the gold sample lacks)."""
    return _tuned(Moments.of(h, a_gold), Moments.of(None, a_other))


def _tuned(gold: Moments, other: Moments) -> float:
    n, big_n = gold.n, other.n
    if n < 2 or big_n < 1:
        return math.nan
    var = _spread(gold.machine() + other)
    if not var > 0:
        return 0.0
    return min(1.0, max(0.0, gold.cov / ((1 + n / big_n) * var)))


def _spread(every: Moments) -> float:
    """The machine values' variance (n - 1 in the denominator), 0 where it is below the
    rounding of their mean (a constant's mean summed in floating point is off by an ulp or
    so, its squared deviations then ~1e-33, not 0: no spread to weigh)."""
    var = every.m2_a / (every.n - 1)
    return var if var > (64 * _EPS * abs(every.mean_a)) ** 2 else 0.0


_EPS = float(np.finfo(np.float64).eps)


def ppi_mean(h, a_gold, a_other, level: float = 0.95, lam: float | None = None
             ) -> PPIEstimate:
    """The estimates of SPEC §12 from per-query values: ``h`` and ``a_gold`` on the gold
    queries (in the same order), ``a_other`` on the other queries. ``lam`` None: PPI++."""
    return ppi_moments(Moments.of(h, a_gold), Moments.of(None, a_other), level, lam)


def ppi_moments(gold: Moments, other: Moments, level: float = 0.95, lam: float | None = None
                ) -> PPIEstimate:
    """``ppi_mean`` from the moments of the gold and the other queries (what partitions of
    queries add up to, ``Moments.__add__``)."""
    if lam is not None and not 0 <= lam <= 1:
        raise OptionError(f"{{option}} must lie in [0, 1], got {lam}", "ppi_lambda")
    n, big_n = gold.n, other.n
    every = gold.machine() + other
    machine = (Interval.normal(every.mean_a, math.sqrt(every.var_a / every.n), level)
               if every.n else UNDEFINED)
    if n < 2:
        return PPIEstimate(UNDEFINED, math.nan, UNDEFINED, machine, UNDEFINED, n, big_n,
                           math.nan)
    gold_only = Interval.normal(gold.mean_h, math.sqrt(gold.var_h / n), level)
    bias = Interval.normal(gold.mean_a - gold.mean_h, math.sqrt(gold.var_of(-1, 1) / n),
                           level)
    if big_n < 1:
        return PPIEstimate(UNDEFINED, math.nan, gold_only, machine, bias, n, big_n, math.nan)
    weight = _tuned(gold, other) if lam is None else float(lam)
    value = weight * other.mean_a + (gold.mean_h - weight * gold.mean_a)
    variance = weight**2 * other.var_a / big_n + gold.var_of(1, -weight) / n
    ppi = Interval.normal(value, math.sqrt(variance), level)
    effective = n * gold_only.se**2 / variance if variance > 0 else math.nan
    return PPIEstimate(ppi, weight, gold_only, machine, bias, n, big_n, effective)


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
    parts = {str(name): (Moments.of(h[gold_strata == name], a_gold[gold_strata == name]),
                         Moments.of(None, a_other[other_strata == name])) for name in names}
    return stratified_moments(parts, level, lam)


def stratified_moments(parts: Mapping[str, tuple[Moments, Moments]], level: float = 0.95,
                       lam: float | None = None) -> PPIEstimate:
    """``stratified_ppi_mean`` from each stratum's moments (name -> (gold, other))."""
    every = Moments()
    for gold, other in parts.values():
        every = every + gold.machine() + other
    machine = Interval.normal(every.mean_a, math.sqrt(every.var_a / every.n), level)
    gold_n = sum(g.n for g, _ in parts.values())
    other_n = sum(o.n for _, o in parts.values())
    z = _z(level)
    found, sums = [], np.zeros((3, 2))  # (ppi, gold, bias) x (value, variance)
    for name in sorted(parts):
        gold, other = parts[name]
        weight = (gold.n + other.n) / every.n
        if gold.n < 2:
            return PPIEstimate(UNDEFINED, math.nan, UNDEFINED, machine, UNDEFINED, gold_n,
                               other_n, math.nan)
        part = (ppi_moments(gold, other, level, lam) if other.n
                else _gold_alone(gold, level))
        found.append(Stratum(name, weight, gold.n, other.n, part.lam, part.ppi))
        for row, est in enumerate((part.ppi, part.gold, part.bias)):
            sums[row] += weight * est.value, weight**2 * est.se**2
    ppi, gold_only, bias = (Interval(v, math.sqrt(var), v - z * math.sqrt(var),
                                     v + z * math.sqrt(var)) for v, var in sums)
    effective = gold_n * sums[1, 1] / sums[0, 1] if sums[0, 1] > 0 else math.nan
    return PPIEstimate(ppi, found[0].lam if len(found) == 1 else math.nan, gold_only, machine,
                       bias, gold_n, other_n, effective, tuple(found))


def _gold_alone(gold: Moments, level: float) -> PPIEstimate:
    """A stratum whose every query is gold: its gold mean is its PPI estimate."""
    alone = Interval.normal(gold.mean_h, math.sqrt(gold.var_h / gold.n), level)
    bias = Interval.normal(gold.mean_a - gold.mean_h, math.sqrt(gold.var_of(-1, 1) / gold.n),
                           level)
    return PPIEstimate(alone, 0.0, alone, alone, bias, gold.n, 0, float(gold.n))


def gold_needed(h, a_gold, a_other, half_width: float, level: float = 0.95,
                lam: float | None = None) -> tuple[float, float]:
    """How many gold queries (of the same query set) the observed variances call for to reach
    an interval of ``half_width``: (gold alone, PPI). The total number of queries stays
    n + N, so a gold query more is an unlabeled one fewer; PPI++ tunes its weight for each
    number of gold queries (a fixed ``lam`` stays fixed); NaN where even judging every
    query by hand would not reach it, or where the sample gives no variance to plan from."""
    return gold_needed_moments(Moments.of(h, a_gold), Moments.of(None, a_other), half_width,
                               level, lam)


def gold_needed_moments(gold: Moments, other: Moments, half_width: float,
                        level: float = 0.95, lam: float | None = None
                        ) -> tuple[float, float]:
    """``gold_needed`` from the moments of the gold and the other queries."""
    if not half_width > 0:
        raise OptionError(f"{{option}} must be above 0, got {half_width}", "gold_plan")
    n, total = gold.n, gold.n + other.n
    if n < 2 or other.n < 1:
        return math.nan, math.nan
    z = _z(level)
    var_h = gold.var_h
    alone = math.ceil((z * math.sqrt(var_h) / half_width) ** 2) if var_h > 0 else 2
    every = gold.machine() + other
    var_a, cov = every.var_a, gold.cov
    sizes = np.arange(2, total, dtype=np.float64)  # gold queries; the rest unlabeled
    if lam is not None:
        weight = np.full_like(sizes, float(lam))
    else:  # PPI++ at each size: its own tuned weight (never worse than the gold alone)
        spread = _spread(every)
        weight = (np.clip(cov / ((1 + sizes / (total - sizes)) * spread), 0, 1)
                  if spread > 0 else np.zeros_like(sizes))
    var_r = np.maximum(0.0, var_h - 2 * weight * cov + weight**2 * gold.var_a)
    width = z * np.sqrt(weight**2 * var_a / (total - sizes) + var_r / sizes)
    reached = np.flatnonzero(width <= half_width)
    ppi = float(sizes[reached[0]]) if len(reached) else math.nan
    return (float(alone) if alone <= total else math.nan), ppi


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise OptionError(f"{{option}} must lie in (0, 1), got {level}", "confidence")
    return NormalDist().inv_cdf(0.5 + level / 2)


def judge_ppi(margin: Margin, run: str, h: np.ndarray, a_gold: np.ndarray,
              a_other: np.ndarray, baseline_mean: float, alpha: float,
              lam: float | None = None, strata: tuple[np.ndarray, np.ndarray] | None = None,
              ) -> Verdict:
    """The gate on the PPI estimate of the mean paired difference (candidate - baseline):
    ``h`` the differences under the gold judgments on the gold queries, ``a_gold`` and
    ``a_other`` under the machine judgments on the gold and the other queries (SPEC §12;
    ``strata``: each gold and other query's stratum, for stratified PPI). The bounds are
    those of the (1 - 2 alpha) interval, as the paired t's are; the p-values are the normal
    one-sided ones. ``baseline_mean``: what a relative margin is of."""
    n = len(h)
    if n < 2:
        raise OptionError(f"gate {margin.text!r} can neither pass nor fail: {margin.metric} "
                          f"has a gold value in both runs for {n} gold "
                          f"{'query' if n == 1 else 'queries'}")
    level = 1 - 2 * alpha
    est = (ppi_mean(h, a_gold, a_other, level, lam) if strata is None else
           stratified_ppi_mean(h, a_gold, a_other, strata[0], strata[1], level, lam))
    e = est.ppi
    delta = margin.absolute(baseline_mean)
    normal = NormalDist()
    if not e.se > 0:
        p_low = 0.0 if e.value > -delta else 1.0
        p_high = 0.0 if e.value < delta else 1.0
    else:
        p_low = normal.cdf(-(e.value + delta) / e.se)  # H0: difference <= -delta
        p_high = normal.cdf((e.value - delta) / e.se)  # H0: difference >= delta
    if margin.kind == "non_inferior" and lower_better(margin.metric):
        passed, p = e.high < delta, p_high
    elif margin.kind == "non_inferior":
        passed, p = e.low > -delta, p_low
    else:
        passed, p = e.low > -delta and e.high < delta, max(p_low, p_high)
    lam_text = "per stratum" if est.strata else f"{est.lam:.2f}"
    return Verdict(margin, run, n + len(a_other), e.value, delta, e.low, e.high, p,
                   bool(passed), None,
                   judged_by=f"PPI++ on the paired differences: {n} gold queries, "
                             f"{len(a_other)} others, lambda {lam_text}")
