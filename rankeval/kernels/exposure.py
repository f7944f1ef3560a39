"""Expected exposure (Diaz et al., CIKM 2020; SPEC section 11): how far the exposure a user's
sampled rankings give each item is from the exposure its grade deserves.

An item at rank i (to K) gets exposure w(i): p^(i-1) under the RBP reader (``--patience``,
or ``p=``: default 0.5), 1 / log2(i + 1) under the DCG reader (``model='dcg'``). Its expected
exposure e is the mean over the user's sampled rankings (one ranking: that ranking's). The
target e* gives each judged item the mean exposure of the ranks its grade occupies in the
ideal ranking (every judged item by grade descending; equally graded items share them); an
item outside the truth has target 0. Then EE-D = ||e||^2, EE-R = e . e*, and EE-L =
||e - e*||^2 = EE-D - 2 EE-R + ||e*||^2, as diazf/expeval computes them with complete
judgements (``-C``), unnormalised.

The values are per user: on a stochastic run (``Chunk.sampled_user``) every sampled ranking of
a user carries the user's value, so their mean over samples is that value.
"""

from __future__ import annotations

import numpy as np

from rankeval.kernels.sums import Sums


def _weights(s: Sums, ranks: np.ndarray, k: float) -> np.ndarray:
    """The exposure of each 1-based rank, 0 past K."""
    model = str(s.params.get("model", "rbp"))
    ranks = ranks.astype(np.float64)
    if model == "dcg":
        w = 1.0 / np.log2(ranks + 1.0)
    else:
        with np.errstate(under="ignore"):
            w = np.power(float(s.conv.patience), ranks - 1.0)
    return np.where(ranks <= k, w, 0.0)


def _parts(s: Sums, k: float):
    """Per user code: (EE-D, EE-R, ||e*||^2, {metric: (lower, upper bound)}) of the user
    (the sampled user, on a stochastic run), cached on ``s`` per (K, parameters)."""
    key = ("expected_exposure", k, s.conv.patience, tuple(sorted(s.params.items())))
    cache = s.__dict__.setdefault("_cache_exposure", {})
    if key in cache:
        return cache[key]
    c = s.c
    assert c.level_user is not None and c.level_start is not None
    assert c.level_size is not None and c.row_level is not None
    n = c.n_users
    group = c.sampled_user if c.sampled_user is not None else np.arange(n)
    samples = c.samples if c.samples is not None else np.ones(n, dtype=np.int64)
    n_groups = int(group[-1]) + 1 if n else 0
    w = _weights(s, c.pos, k) / samples[c.user]
    n_items = int(c.item.max()) + 1 if len(c.item) else 1
    pair = group[c.user].astype(np.int64) * n_items + c.item
    distinct, at = np.unique(pair, return_inverse=True)
    e = np.bincount(at, w, minlength=len(distinct))
    disparity = np.bincount(distinct // n_items, e * e, minlength=n_groups)
    # the target of each level: the mean exposure of the ranks it holds in the ideal ranking
    depth = int((c.level_start + c.level_size).max(initial=0))
    cumulative = np.concatenate([[0.0], np.cumsum(_weights(s, np.arange(1, depth + 1), k))])
    target = ((cumulative[c.level_start + c.level_size] - cumulative[c.level_start])
              / np.maximum(c.level_size, 1))
    own = np.bincount(c.level_user, c.level_size * target * target, minlength=n)
    first = np.searchsorted(group, np.arange(n_groups))  # each sampled user's first code
    ideal = own[first] if n else own
    row_target = np.where(c.row_level >= 0, target[np.maximum(c.row_level, 0)], 0.0)
    relevance = np.bincount(group[c.user], w * row_target, minlength=n_groups)
    # expeval's bounds (-C): over static and uniformly random rankings of the n judged items
    judged = np.bincount(c.level_user, c.level_size, minlength=n).astype(np.int64)
    squares = np.concatenate([[0.0], np.cumsum(_weights(s, np.arange(1, depth + 1), k) ** 2)])
    # the worst static ranking: grades ascending, a level's items at n - start - size on
    reverse = target * (cumulative[judged[c.level_user] - c.level_start]
                        - cumulative[judged[c.level_user] - c.level_start - c.level_size])
    worst = np.bincount(c.level_user, reverse, minlength=n)
    m = judged[first] if n else judged
    with np.errstate(invalid="ignore", divide="ignore"):
        bounds = {"ee_d": (cumulative[m] ** 2 / m, squares[m]),
                  "ee_r": (worst[first] if n else worst, ideal),
                  "ee_l": (np.zeros(n_groups), squares[m] - 2 * (worst[first] if n else worst)
                           + ideal)}
    cache[key] = out = (disparity[group], relevance[group], ideal[group],
                        {name: (lo[group], hi[group]) for name, (lo, hi) in bounds.items()})
    return out


def _ee_l(s: Sums, k: float) -> np.ndarray:
    d, r, t, _ = _parts(s, k)
    return np.maximum(d - 2.0 * r + t, 0.0)  # a sum of squares: rounding may not make it < 0


def _ee_d(s: Sums, k: float) -> np.ndarray:
    return _parts(s, k)[0]


def _ee_r(s: Sums, k: float) -> np.ndarray:
    return _parts(s, k)[1]


def _normalized(name: str, value):
    """(value - lower) / (upper - lower) with expeval's bounds (-C); undefined (NaN) where
    they coincide (a user whose judged items share one grade, for ee_r), where expeval
    prints a default instead."""
    def kernel(s: Sums, k: float) -> np.ndarray:
        low, high = _parts(s, k)[3][name]
        span = high - low
        defined = np.abs(span) > 1e-12 * np.maximum(1.0, np.abs(high))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined, (value(s, k) - low) / span, np.nan)
    return kernel


KERNELS = {"ee_l": _ee_l, "ee_d": _ee_d, "ee_r": _ee_r,
           "ee_l_norm": _normalized("ee_l", _ee_l), "ee_d_norm": _normalized("ee_d", _ee_d),
           "ee_r_norm": _normalized("ee_r", _ee_r)}
