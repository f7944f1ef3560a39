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

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankeval.analysis.choices import MAX_CANDIDATES, MAX_NEGATIVES
from rankeval.errors import OptionError, plural

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


# A law's mass further than t from its mean is below 2 exp(-2 t^2 / m) (Hoeffding, for the
# binomial and the hypergeometric alike): each row keeps the columns within t of its mode
# such that this is 1e-20, far below the 1e-12 the tables are exact to.
_TAIL = 1e-20
_CHUNK = 512  # rows of the law gathered at once into a dense block
_LAW_ROWS = 128  # rows of the law computed at once: their temporaries stay in the cache
# (50,000 candidates x 999 negatives: 0.3-0.4 s, where 512 rows at once took 0.7-0.9)


@dataclass(frozen=True)
class Law:
    """P(sampled rank = r | true rank R) for the true ranks ``R``, r = 1..m + 1: each row kept
    on a window of ``width`` columns from ``start`` (where all but 1e-20 of its mass lies),
    so that the sums over R the tables are made of cost rows x width, not rows x (m + 1)."""

    values: np.ndarray  # rows x width
    start: np.ndarray  # each row's first column (r - 1)
    columns: int  # m + 1

    def dense(self) -> np.ndarray:
        out = np.zeros((len(self.values), self.columns))
        _scatter(out, self.start, self.values)
        return out

    def _blocks(self, weights: np.ndarray):
        """(first column, dense block of rows x the columns they touch), rows scaled."""
        width = self.values.shape[1]
        for i in range(0, len(self.values), _CHUNK):
            start = self.start[i:i + _CHUNK]
            first = int(start.min())
            block = np.zeros((len(start), int(start.max()) - first + width))
            _scatter(block, start - first, self.values[i:i + _CHUNK] * weights[i:i + _CHUNK, None])
            yield first, block

    def weighted_sum(self, weights: np.ndarray) -> np.ndarray:
        """sum_R w(R) p(. | R): the weighted rows summed over each run of rows that share a
        first column (consecutive true ranks mostly do), then each run's sum added at its
        columns; a block of rows at a time (50,000 candidates x 999 negatives: 0.04 s,
        where a weighted count of every value's column took 0.09)."""
        out = np.zeros(self.columns)
        width = self.values.shape[1]
        for i in range(0, len(self.values), _SUM_ROWS):
            start = self.start[i:i + _SUM_ROWS]
            heads = np.flatnonzero(np.concatenate(([True], start[1:] != start[:-1])))
            sums = np.add.reduceat(self.values[i:i + _SUM_ROWS] * weights[i:i + _SUM_ROWS, None],
                                   heads, axis=0)
            cols = start[heads, None] + np.arange(width)
            out += np.bincount(cols.ravel(), weights=sums.ravel(), minlength=self.columns)
        return out

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """sum_R w(R) p(. | R) p(. | R)^T (``weights`` >= 0): block' block, each block of
        rows over the columns it touches."""
        out = np.zeros((self.columns, self.columns))
        for first, block in self._blocks(np.sqrt(weights)):
            end = first + block.shape[1]
            out[first:end, first:end] += block.T @ block
        return out


_SUM_ROWS = 1024  # rows of the law summed at once: 2.5 MB at m = 999, in the cache


def _scatter(out: np.ndarray, start: np.ndarray, values: np.ndarray) -> None:
    """``out[i, start[i] + j] = values[i, j]``, through the flat index of each value (numpy's
    put_along_axis took 1.4 ms a block of 512 x 311, this 0.3)."""
    width = values.shape[1]
    flat = (np.arange(len(start)) * out.shape[1] + start)[:, None] + np.arange(width)
    out.reshape(-1)[flat.ravel()] = values.ravel()


def sampled_law(true_rank: np.ndarray, n: int, m: int, replacement: bool) -> Law:
    """The law of the sampled rank given each true rank: r - 1 counts the sampled negatives
    that outrank the item, hypergeometric (without replacement) or binomial (with), of the
    n - 1 others of which R - 1 outrank it. Each row from the ratios of consecutive
    probabilities, p(k + 1) / p(k), multiplied outward from its mode and normalised: no
    factorial of the pool (up to 10^12) is formed, no scipy law (whose time grows with the
    pool), and no logarithm or exponential (they were half of the time). Exact to ~1e-12
    (tests/test_bounds.py against scipy)."""
    above = np.asarray(true_rank, dtype=np.float64) - 1  # K, of the pool
    pool = float(max(n - 1, 1))
    half = math.ceil(math.sqrt(m * math.log(2 / _TAIL) / 2)) + 2  # the mode is within 1 of the mean
    width = min(m + 1, 2 * half + 1)
    if replacement:
        mode = np.floor((m + 1) * above / pool)
    else:
        mode = np.floor((m + 1) * (above + 1) / (pool + 2))
    start = np.clip(mode - half, 0, m + 1 - width)
    values = np.empty((len(above), width))
    for i in range(0, len(above), _LAW_ROWS):
        rows = slice(i, i + _LAW_ROWS)
        _law_rows(above[rows, None], start[rows, None], mode[rows, None], pool, m,
                  replacement, values[rows])
    return Law(values, start.astype(np.int64), m + 1)


def _law_rows(above: np.ndarray, start: np.ndarray, mode: np.ndarray, pool: float, m: int,
              replacement: bool, out: np.ndarray) -> None:
    """Each row of the law on its window, relative to its mode (column ``c``): to the right
    the running product of the ratios p(k + 1) / p(k) from the mode, to the left that of
    their inverses towards it. Both only shrink away from the mode (the laws are
    log-concave), so no product overflows; one that underflows is a probability below
    1e-308 of the mode's. Past the support's ends the products are 0 with no mask: the last
    ratio inside is 0 (a factor K - k or m - k), and the first one outside to the left is
    infinite (a factor n - 1 - K - m + 1 + k, or 1 - p, of 0), its inverse 0."""
    width = out.shape[1]
    k = start + np.arange(width - 1, dtype=np.float64)[None, :]  # the ratio from k to k + 1
    if replacement:
        p = above / pool
        lo, hi = np.where(p >= 1, float(m), 0.0), np.where(p <= 0, 0.0, float(m))
    else:
        lo, hi = np.maximum(0, m - (pool - above)), np.minimum(m, above)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if replacement:
            ratio = (m - k) * p / ((k + 1) * (1 - p))
        else:
            ratio = np.multiply(above - k, m - k, dtype=np.float64)
            ratio /= (k + 1) * (pool - above - m + 1 + k)
        inverse = 1.0 / ratio
    c = np.clip(mode, lo, hi) - start  # the mode's column (in the window: see its start)
    column = np.arange(width - 1)[None, :]
    ratio[column < c] = 1.0  # right of the mode: p(c + j) / p(c)
    out[:, 0] = 1.0
    np.cumprod(ratio, axis=1, out=out[:, 1:])
    inverse[column >= c] = 1.0  # left of it: p(c - j) / p(c)
    out[:, :-1] *= np.cumprod(inverse[:, ::-1], axis=1)[:, ::-1]
    out /= out.sum(axis=1, keepdims=True)


def sampled_pmf(true_rank: np.ndarray, n: int, m: int, replacement: bool) -> np.ndarray:
    """P(sampled rank = r | true rank R), rows R, columns r = 1..m + 1."""
    return sampled_law(true_rank, n, m, replacement).dense()


@functools.lru_cache(maxsize=1)
def _system(n: int, m: int, replacement: bool) -> tuple[np.ndarray, np.ndarray, Law,
                                                        np.ndarray, np.ndarray]:
    """What every metric's bv table shares: the true ranks and their prior, the law, its
    prior-weighted Gram matrix A'A and column sums c (one per run of ``sampled``)."""
    ranks, prior = _ranks(n)
    law = sampled_law(ranks, n, m, replacement)
    return ranks, prior, law, law.gram(prior), law.weighted_sum(prior)


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
    ranks, prior, law, gram, c = _system(n, m, replacement)
    rhs = law.weighted_sum(prior * metric(name, k, ranks, n))  # A'b
    lhs = (1 - gamma) * gram + gamma * np.diag(c)
    if gamma > 0:  # positive definite (every c[r] > 0): one solve
        return np.linalg.solve(lhs, rhs)
    return np.linalg.lstsq(lhs, rhs, rcond=None)[0]  # the least-bias table: min-norm


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
    # each held-out item's own number of candidates: where it came from (a column, a file),
    # and its least and greatest (``candidates`` is then the greatest); None: one for all
    per_user: dict[str, Any] | None = None
    config: str | None = None  # the configuration file whose keys gave option defaults
    # with the truth: what ranked each run's held-out items among its negatives, rank (the
    # file's ranks) or score (build.ordering.ordered_by); empty without the truth
    ordered_by: dict[str, str] = field(default_factory=dict)

    def candidates_text(self) -> str:
        """``3,706 candidates``, or ``100 to 400 candidates per user (n_candidates)``."""
        if self.per_user is None:
            return plural(self.candidates, "candidate")
        low, high = self.per_user["min"], self.per_user["max"]
        return (f"{low:,} to {plural(high, 'candidate')} per user ({self.per_user['from']})"
                if low != high else f"{plural(high, 'candidate')} ({self.per_user['from']})")

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "candidates_per_user": self.per_user,
                "negatives": self.negatives,
                "gamma": self.gamma, "sampling": "with replacement" if self.replacement
                else "without replacement", "ties": self.ties,
                "runs": [r.to_dict() for r in self.runs],
                "flips": [{"metric": m, "runs": [a, b], "estimator": e}
                          for m, a, b, e in self.flips], "warnings": list(self.warnings),
                "config": self.config, "ordered_by": dict(self.ordered_by) or None}

    def __repr__(self) -> str:
        lines = [f"SampledResult({len(self.runs)} run(s), {plural(self.negatives, 'negative')} of "
                 f"{plural(self.candidates, 'candidate')})"]
        for r in self.runs:
            shown = ", ".join(f"{m}: sampled {v['sampled']:.4g}, bv {v['bv']:.4g}"
                              for m, v in r.values.items())
            lines.append(f"  {r.name} ({plural(r.instances, 'item')}): {shown}")
        return "\n".join(lines)


ESTIMATORS = ("sampled", "rank_estimate", "bv")


Ranks = np.ndarray | tuple[np.ndarray, np.ndarray]


def estimate(ranks: dict[str, Ranks], metrics: list[tuple[str, int | None]], n: int,
             m: int, gamma: float = 0.1, replacement: bool = False,
             per_instance: dict[str, np.ndarray] | None = None) -> SampledResult:
    """Each run's sampled metrics and corrections, from its instances' sampled ranks: one
    rank each, or a range (lowest, highest) for an item tied with negatives, whose value is
    the mean over the range (the expectation over the tie's orders). ``per_instance``: each
    run's instances' own numbers of candidates (``n`` for all when None): the instances are
    grouped by it, one table per distinct number."""
    sizes = {run: np.full(len(_low(r)), n, dtype=np.int64) for run, r in ranks.items()}
    sizes |= {run: np.asarray(v, dtype=np.int64) for run, v in (per_instance or {}).items()}
    for each in sorted({int(x) for v in sizes.values() for x in np.unique(v)} or {n}):
        check_sizes(each, m)
    if not 0 <= gamma <= 1:
        raise OptionError(f"gamma must lie in [0, 1], got {gamma}")

    @functools.cache
    def tables(size: int) -> dict[tuple[str, int | None, str], np.ndarray]:
        return {(name, k, how): table(name, k, size, m, how, gamma, replacement)
                for name, k in metrics for how in ESTIMATORS}

    runs = []
    for run, given in ranks.items():
        low, high = given if isinstance(given, tuple) else (given, given)
        for r in (low, high):
            if len(r) and (r.min() < 1 or r.max() > m + 1):
                raise OptionError(f"{run}: sampled ranks must lie in 1..{m + 1} (the item and "
                                  f"{plural(m, 'negative')}), got {int(r.min())}..{int(r.max())}")
        groups = [(int(size), sizes[run] == size) for size in np.unique(sizes[run])]
        runs.append(Estimates(run, len(low), {
            _label(name, k): {how: _grouped_mean(
                [(tables(size)[name, k, how], low[at], high[at]) for size, at in groups])
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


def _low(given: Ranks) -> np.ndarray:
    return given[0] if isinstance(given, tuple) else given


def _grouped_mean(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> float:
    """The mean over every instance of groups each with its own table (``_mean``)."""
    total = sum(len(low) for _, low, _ in parts)
    if not total:
        return math.nan
    return sum(_mean(values, low, high) * len(low) for values, low, high in parts
               if len(low)) / total


def _label(name: str, k: int | None) -> str:
    return name if k is None else f"{name}@{k}"
