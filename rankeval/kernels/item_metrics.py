"""Per-user metrics from item data (SPEC section 7): popularity (arp, long_tail, novelty) and
feature similarity (ild, serendipity). Numpy only; kernels as in ``metrics.py``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankeval.kernels.sums import Sums


def _arp(s: Sums, k: float) -> np.ndarray:
    assert s.c.popularity is not None  # item metrics run with --train, which fills it in
    return s.mean_over_list("arp", k, s.c.popularity[s.c.item])


def _long_tail(s: Sums, k: float) -> np.ndarray:
    assert s.c.long_tail is not None  # item metrics run with --train, which fills it in
    return s.mean_over_list("long_tail", k, s.c.long_tail[s.c.item].astype(np.float64))


def _novelty(s: Sums, k: float) -> np.ndarray:
    """-log2(pop / N) per item, N the training users (the discovery model) or all training
    popularity (the choice model); an item unseen in training counts log2(N + 1), the largest
    finite value (SPEC section 7), or 0 (``novelty_unseen``)."""
    c = s.c
    n = float(c.n_train_users if s.conv.novelty_model == "discovery" else c.popularity_total)
    pop = c.popularity
    assert pop is not None  # item metrics run with --train, which fills it in
    unseen = np.log2(n + 1.0) if s.conv.novelty_unseen == "rarest" else 0.0
    info = np.where(pop > 0, -np.log2(np.where(pop > 0, pop, 1.0) / max(n, 1.0)), unseen)
    return s.mean_over_list("novelty", k, info[c.item])


_ROWS = 1 << 18  # rows per block of the feature kernels: rows x dims stays small


def _ild(s: Sums, k: float) -> np.ndarray:
    """Over pairs of unit vectors, sum_{i<j} v_i . v_j = (|sum v|^2 - sum |v|^2) / 2, so a
    list of n costs n vectors, not n^2 pairs. NaN (not scored) below 2 items with features."""
    c = s.c
    assert c.vectors is not None and c.has_vector is not None  # run with --item-features
    rows = np.flatnonzero((c.pos <= k) & c.has_vector[c.item])
    user = c.user[rows]
    n = np.bincount(user, minlength=c.n_users).astype(np.float64)
    total = _user_sums(user, c.item[rows], c.vectors, c.n_users)
    norms = np.einsum("ij,ij->i", c.vectors, c.vectors)[c.item[rows]]
    squares = np.bincount(user, norms, minlength=c.n_users)
    same = (np.einsum("ij,ij->i", total, total) - squares) / 2
    pairs = n * (n - 1) / 2
    out = np.full(c.n_users, np.nan)
    scored = n >= 2
    out[scored] = 1.0 - same[scored] / pairs[scored]
    return out


_CELLS = 1 << 21  # floats gathered at once by _user_sums


def _user_sums(user: np.ndarray, item: np.ndarray, vectors: np.ndarray,
               n_users: int) -> np.ndarray:
    """Per user, the sum of the vectors of its rows (``user`` sorted). Users with the same
    number of rows are summed together as a (users, rows, dims) block: a plain sum over one
    axis, several times faster than a segmented reduction. Loops over row counts and
    blocks, never over users."""
    dims = vectors.shape[1]
    total = np.zeros((n_users, dims))
    counts = np.bincount(user, minlength=n_users)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    by_count = np.argsort(counts, kind="stable")
    edges = np.searchsorted(counts[by_count], np.arange(counts.max(initial=0) + 2))
    for size in range(1, len(edges) - 1):
        users = by_count[edges[size]:edges[size + 1]]
        step = max(1, _CELLS // (size * dims))
        for a in range(0, len(users), step):
            block = users[a:a + step]
            rows = starts[block][:, None] + np.arange(size)
            total[block] = vectors[item[rows]].sum(axis=1)
    return total


def _serendipity(s: Sums, k: float) -> np.ndarray:
    """Microsoft Recommenders' serendipity with binary relevance: per item of the list,
    rel x (1 - v_i . profile_u / history_u); NaN (not scored) without training items."""
    c = s.c
    history = c.history
    # serendipity runs with --item-features and --train, which fill these in
    assert c.vectors is not None and c.profile is not None and history is not None
    value = np.zeros(len(c.item))
    for a in range(0, len(c.item), _ROWS):
        user, item = c.user[a:a + _ROWS], c.item[a:a + _ROWS]
        sim = np.einsum("ij,ij->i", c.vectors[item], c.profile[user])
        with np.errstate(invalid="ignore", divide="ignore"):
            sim = np.where(history[user] > 0, sim / history[user], 0.0)
        value[a:a + _ROWS] = s.relevant[a:a + _ROWS] * (1.0 - sim)
    out = s.mean_over_list("serendipity", k, value)
    out[history == 0] = np.nan
    return out


KERNELS: dict[str, Callable[[Sums, float], np.ndarray]] = {
    "arp": _arp, "long_tail": _long_tail, "novelty": _novelty, "ild": _ild,
    "serendipity": _serendipity,
}
