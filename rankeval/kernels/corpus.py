"""Corpus-level metrics (SPEC section 7): one value for the whole run, from how often each item
appears in the top-K lists. Item counts add up across partitions of users, so a distributed
engine merges counts and computes these once. Numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rankeval.registry import CORPUS, REGISTRY


@dataclass(frozen=True)
class Lists:
    """The top-K lists of a run at one K, as item counts."""

    counts: np.ndarray  # how many lists hold each item (items in no list left out)
    users: int  # users with at least one item in their top K
    k: int  # the cut-off (for @all: the longest list)
    catalog_size: int  # 0 when no catalog is known
    entropy_unit: str = "bits"  # or "nats" (the settings' entropy_unit)
    entropy_per_item: bool = False  # entropy divided by the distinct items (RecBole)


def _coverage(x: Lists) -> float:
    return len(x.counts) / x.catalog_size if x.catalog_size else 0.0


def _bits(x: Lists) -> float:
    total = float(x.counts.sum())
    if not total:  # no slot to share out (undefined_when in the registry)
        return math.nan
    p = x.counts / total
    return float(-(p * np.log2(p)).sum())


def _entropy(x: Lists) -> float:
    value = _bits(x) * (math.log(2) if x.entropy_unit == "nats" else 1.0)
    return value / len(x.counts) if x.entropy_per_item and len(x.counts) else value


def _norm_entropy(x: Lists) -> float:
    return _bits(x) / float(np.log2(x.catalog_size)) if x.catalog_size > 1 else math.nan


def _gini(x: Lists) -> float:
    """Over the whole catalog: never-recommended items are zeros at the bottom."""
    n, total = x.catalog_size, float(x.counts.sum())
    if not n or not total:
        return math.nan
    c = np.sort(x.counts.astype(np.float64))
    j = np.arange(n - len(c) + 1, n + 1, dtype=np.float64)  # ranks of the non-zero counts
    return float(((2 * j - n - 1) * c).sum() / (n * total))


def _personalization(x: Lists) -> float:
    """1 - mean over pairs of users of |L_u & L_v| / K: the pairs sharing item i are
    c_i (c_i - 1) / 2, so the mean overlap needs item counts only (no users x users matrix)."""
    u = x.users
    if u < 2 or not x.k:  # no pair of lists to compare
        return math.nan
    c = x.counts.astype(np.float64)
    shared = float((c * (c - 1)).sum()) / 2
    return 1.0 - shared / (u * (u - 1) / 2) / x.k


CORPUS_KERNELS: dict[str, Callable[[Lists], float]] = {
    "coverage": _coverage,
    "item_coverage": lambda x: float(len(x.counts)),
    "entropy": _entropy,
    "norm_entropy": _norm_entropy,
    "gini": _gini,
    "personalization": _personalization,
}
assert set(CORPUS_KERNELS) == {n for n, m in REGISTRY.items() if m.scope == CORPUS}
