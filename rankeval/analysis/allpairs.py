"""Every pair of runs at once (``compare --all-pairs``): which of several systems differ.

The default procedure is the randomised Tukey HSD test (Carterette 2012): each user's values
are permuted across the systems, and a pair's p-value is the share of permutations in which
the largest difference between any two systems' means reaches the pair's observed difference
(a family-wise error control over all pairs at once). When the permutations are few (tiny
inputs) they are enumerated exactly; otherwise ``rounds`` are drawn. Or the paired tests of
``compare`` with any correction over all pairs (``--correction holm|bonferroni|bh|by|none``).
The systems are then grouped by a compact letter display: systems sharing a letter do not
differ significantly.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.analysis.significance import compare, correct

TUKEY = "tukey"
_CELLS = 1 << 22  # permuted values held at once


@dataclass(frozen=True)
class Pairs:
    """All pairs of one metric: runs ordered by mean, best first."""

    metric: str
    runs: list[str]
    means: list[float]
    users: int
    difference: list[list[float]]  # [i][j] = mean_j - mean_i
    p_adjusted: list[list[float]]  # NaN on the diagonal
    significant: list[list[bool]]
    groups: dict[str, str]  # run -> letters
    procedure: str  # "tukey" (randomised Tukey HSD) or a correction of paired tests
    exact: bool  # the permutations were enumerated
    across: str = "pairs"  # the correction's family: this metric's pairs, or every metric's

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def randomized_tukey(x: np.ndarray, rounds: int, seed: int) -> tuple[np.ndarray, bool]:
    """p-values (systems x systems) of the randomised Tukey HSD test on ``x`` (users x
    systems), and whether the permutations were enumerated exactly."""
    n, m = x.shape
    means = x.mean(axis=0)
    observed = np.abs(means[None, :] - means[:, None])
    tol = 1e-12 * max(1.0, float(np.abs(means).max(initial=0.0)))
    total = math.factorial(m) ** n if n * math.log(math.factorial(m)) < 40 else math.inf
    if total <= rounds:
        ranges = _all_ranges(x)
        exact = True
    else:
        ranges = _sampled_ranges(x, rounds, seed)
        exact = False
    counts = np.searchsorted(np.sort(ranges), observed - tol, side="left")
    reached = len(ranges) - counts  # permutations whose largest range reaches the difference
    p = reached / len(ranges) if exact else (reached + 1) / (len(ranges) + 1)
    np.fill_diagonal(p, np.nan)
    return p, exact


def _all_ranges(x: np.ndarray) -> np.ndarray:
    """The largest difference of means under every assignment of each user's values to
    the systems (m!^n of them: only for tiny inputs)."""
    n, m = x.shape
    perms = np.array(list(itertools.permutations(range(m))))  # m! x m
    per_user = x[:, perms]  # n x m! x m: each user's values under each permutation
    sums = np.zeros((1, m))
    for u in range(n):  # users one by one: the product grows by m! each time
        sums = (sums[:, None, :] + per_user[u][None, :, :]).reshape(-1, m)
    means = sums / n
    return means.max(axis=1) - means.min(axis=1)


def _sampled_ranges(x: np.ndarray, rounds: int, seed: int) -> np.ndarray:
    n, m = x.shape
    rng = np.random.default_rng(seed)
    out = np.empty(rounds)
    step = max(1, _CELLS // (n * m))
    for a in range(0, rounds, step):
        take = min(step, rounds - a)
        order = np.argsort(rng.random((take, n, m)), axis=2)
        means = np.take_along_axis(np.broadcast_to(x, (take, n, m)), order, axis=2).mean(axis=1)
        out[a:a + take] = means.max(axis=1) - means.min(axis=1)
    return out


def paired_p(x: np.ndarray, test: str, rounds: int, seed: int, level: float,
             correction: str) -> np.ndarray:
    """p-values of ``compare``'s paired test for every pair, corrected over all pairs."""
    m = x.shape[1]
    pairs = list(itertools.combinations(range(m), 2))
    raw = [compare(x[:, i], x[:, j], test, rounds, seed, level).p_value for i, j in pairs]
    adjusted = correct(raw, correction)
    p = np.full((m, m), np.nan)
    for (i, j), q in zip(pairs, adjusted, strict=True):
        p[i, j] = p[j, i] = q
    return p


def letters(significant: np.ndarray) -> list[str]:
    """A compact letter display (Piepho 2004, insert and absorb): systems sharing a letter
    do not differ. ``significant[i][j]``: i and j differ. Systems come best first, and
    letters are given in that order."""
    m = len(significant)
    groups: list[set[int]] = [set(range(m))]
    for i, j in itertools.combinations(range(m), 2):
        if not significant[i][j]:
            continue
        split = []
        for g in groups:
            if i in g and j in g:
                split += [g - {i}, g - {j}]
            else:
                split.append(g)
        groups = [g for k, g in enumerate(split)  # absorb: drop groups inside another
                  if g and not any(g < h or (g == h and k2 < k)
                                   for k2, h in enumerate(split))]
    groups.sort(key=lambda g: min(g))
    names = [_letter(k) for k in range(len(groups))]
    return ["".join(name for name, g in zip(names, groups, strict=True) if s in g)
            for s in range(m)]


def _letter(k: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    return alphabet[k] if k < 26 else alphabet[k // 26 - 1] + alphabet[k % 26]


def all_pairs(metric: str, runs: list[str], values: list[np.ndarray], procedure: str,
              alpha: float, test: str, rounds: int, seed: int, level: float) -> Pairs:
    """Every pair of ``runs`` on one metric, from their values over the same users (NaN: no
    value; users without a value in every run are left out)."""
    x = np.column_stack(values)
    x = x[~np.isnan(x).any(axis=1)]
    means = x.mean(axis=0) if len(x) else np.full(len(runs), np.nan)
    order = np.argsort(-means, kind="stable")  # best first
    x, means = x[:, order], means[order]
    names = [runs[i] for i in order]
    m = len(names)
    if len(x) < 2:
        p, exact = np.full((m, m), np.nan), False
    elif procedure == TUKEY:
        p, exact = randomized_tukey(x, rounds, seed)
    else:
        p, exact = paired_p(x, test, rounds, seed, level, procedure), False
    significant = np.nan_to_num(p, nan=1.0) < alpha
    return Pairs(metric, names, means.tolist(), len(x),
                 (means[None, :] - means[:, None]).tolist(), p.tolist(),
                 significant.tolist(), dict(zip(names, letters(significant), strict=True)),
                 procedure, exact)


def corrected_across(found: list[Pairs], correction: str, alpha: float) -> list[Pairs]:
    """Every pair of every metric as one family (``compare --all-pairs --correct-across
    metrics``): ``found`` holds each metric's pairs with their raw p-values (procedure
    ``none``), here corrected together by ``correction``, significance and letters redone."""
    upper = [np.triu_indices(len(f.runs), 1) for f in found]
    raw = [np.asarray(f.p_adjusted, dtype=np.float64)[i, j] for f, (i, j) in zip(
        found, upper, strict=True)]
    adjusted = np.asarray(correct(np.concatenate(raw).tolist() if raw else [], correction))
    out, at = [], 0
    for f, (i, j) in zip(found, upper, strict=True):
        m = len(f.runs)
        p = np.full((m, m), np.nan)
        p[i, j] = p[j, i] = adjusted[at:at + len(i)]
        at += len(i)
        significant = np.nan_to_num(p, nan=1.0) < alpha
        out.append(dataclasses.replace(
            f, p_adjusted=p.tolist(), significant=significant.tolist(),
            groups=dict(zip(f.runs, letters(significant), strict=True)), procedure=correction,
            across="metrics"))
    return out
