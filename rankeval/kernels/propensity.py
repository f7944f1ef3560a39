"""Propensity-weighted metrics for missing-not-at-random feedback (Yang et al. 2018; Steck
2011): each relevant item the user was observed with counts w = 1 / P(observed), P from the
item's training popularity, P proportional to popularity^((gamma + 1) / 2) (``gamma=``), or
weights popularity^-beta (``pop_recall``, Steck). An item unseen in training has no
propensity and is left out, of the hits and of the user's relevant items alike.

Self-normalised (``sn=True``, the default): the weights rescaled to a mean of 1 over the
user's relevant items, so that equal weights (gamma = -1) give the plain metric (binary
gain): ``ips_recall`` = sum_hits w / sum_relevant w (Yang et al.'s SNIPS), ``ips_precision``
= that times |R| / K, ``ips_dcg`` = sum_hits w / log2(rank + 1) times |R| / sum w, and
``ips_ndcg`` = ``ips_dcg`` / IDCG@K(|R|). IPS (``sn=False``): the weights as they are
(recall over |R|, precision over K, DCG unscaled): unbiased for the sums when the
propensities are absolute probabilities of observation.
"""

from __future__ import annotations

import numpy as np

from rankeval.kernels.sums import Sums
from rankeval.params import exponent


def _parts(s: Sums, k: float, dcg: bool, name: str = "ips_recall"
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per user: the weighted hits (or weighted DCG) in the top K, the sum of the weights
    of its relevant items and their number. ``name``: an ips_ metric, or pop_recall."""
    c = s.c
    assert c.propensity is not None  # built for every propensity-weighted metric
    key = exponent(name, s.params)
    assert key is not None
    weight, total, count = c.propensity[key]
    t = s.conv.relevance_threshold
    rows = np.flatnonzero((c.rel > 0 if t is None else c.rel >= t) & (c.pos <= k))
    w = weight.at(c.user[rows], c.item[rows])
    if dcg:
        w = w / np.log2(c.pos[rows] + 1.0)
    return np.bincount(c.user[rows], w, minlength=c.n_users), total, count


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _recall(s: Sums, k: float, name: str = "ips_recall") -> np.ndarray:
    hits, total, count = _parts(s, k, False, name)
    out = _ratio(hits, total) if s.params.get("sn", True) else _ratio(hits, count)
    return np.where(total > 0, out, np.nan)


def _precision(s: Sums, k: float) -> np.ndarray:
    hits, total, count = _parts(s, k, False)
    depth = np.minimum(s.list_length, k) if np.isinf(k) else np.full(len(hits), k)
    scale = _ratio(count, total) if s.params.get("sn", True) else 1.0
    return np.where(total > 0, _ratio(hits * scale, depth), np.nan)


def _dcg(s: Sums, k: float) -> np.ndarray:
    gain, total, count = _parts(s, k, True)
    scale = _ratio(count, total) if s.params.get("sn", True) else 1.0
    return np.where(total > 0, gain * scale, np.nan)


def _ndcg(s: Sums, k: float) -> np.ndarray:
    _, _, count = _parts(s, k, True)
    depth = np.minimum(count, k).astype(np.int64)
    discounts = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, depth.max(
        initial=0) + 2)))])
    return _ratio(_dcg(s, k), discounts[depth])


KERNELS = {"ips_recall": _recall, "ips_precision": _precision, "ips_dcg": _dcg,
           "ips_ndcg": _ndcg, "pop_recall": lambda s, k: _recall(s, k, "pop_recall")}
