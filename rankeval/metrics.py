"""Metric kernels: vectorized numpy over a ``Chunk``, one value per user, no loop over users.

Each kernel takes the per-chunk ``Sums`` and a cut-off K (``inf`` for ``@all``) and returns an
array of n_users values. Imports numpy and pure-Python modules only (a test checks it).
Per-user sums are ``np.bincount`` over the user codes of the rows with pos <= K; within-user
running counts are a global cumsum minus its value at each user's first row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property

import numpy as np

from .chunk import Chunk, segment_positions
from .names import MetricSpec
from .registry import REGISTRY


def gain(relevance: np.ndarray, kind: str) -> np.ndarray:
    """linear: max(r, 0); exponential: 2^r - 1 for r > 0, else 0."""
    if kind == "linear":
        return np.maximum(relevance, 0.0)
    return np.where(relevance > 0, np.exp2(np.maximum(relevance, 0.0)) - 1.0, 0.0)


# Past this gain a sum of gains may overflow float64 (2^1024): gains are then divided by each
# user's largest gain, which leaves NDCG exact and finite, and CG/DCG/IDCG are multiplied back
# (and refused by the engine when that overflows).
_SCALE_FROM = 2.0**960


def scaled_gain(relevance: np.ndarray, top: np.ndarray, kind: str) -> np.ndarray:
    """gain(r) / gain(top), computed without forming either (top >= r > 0 per row)."""
    if kind == "linear":
        return relevance / top
    ln2 = np.log(2.0)
    # (2^r - 1) / (2^t - 1) = 2^(r - t) (1 - 2^-r) / (1 - 2^-t)
    return np.exp2(relevance - top) * np.expm1(-relevance * ln2) / np.expm1(-top * ln2)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


class Sums:
    """Per-user sums over one chunk, computed once and shared by every metric and K.

    Only rows with a positive relevance can add to any metric (gain and relevance are 0 at or
    below 0), and they are usually a small share of the rows, so the sums run over those rows
    alone: ``g`` (positive gain) and its subset ``h`` (relevant: the hits).
    """

    def __init__(self, chunk: Chunk, conv):
        self.c = chunk
        self.conv = conv
        self._cache: dict[tuple[str, float], np.ndarray] = {}
        rel = chunk.rel
        g = np.flatnonzero(rel > 0)
        self.g_user, self.g_pos, self.g_rel = chunk.user[g], chunk.pos[g], rel[g]
        t = conv.relevance_threshold
        h = slice(None) if t is None else self.g_rel >= t
        self.h_user, self.h_pos, self.h_rel = self.g_user[h], self.g_pos[h], self.g_rel[h]
        top = chunk.max_relevance
        largest = float(top.max()) if len(top) else 0.0
        # Per-user divisor of every gain, or None: gains are used as they are.
        self.unit = None
        with np.errstate(over="ignore"):
            if largest > 0 and gain(np.array([largest]), conv.gain)[0] >= _SCALE_FROM:
                self.unit = gain(np.where(top > 0, top, 1.0), conv.gain)

    def _gain(self, rel: np.ndarray, user: np.ndarray) -> np.ndarray:
        if self.unit is None:
            return gain(rel, self.conv.gain)
        return scaled_gain(rel, self.c.max_relevance[user], self.conv.gain)

    def unscaled(self, sums: np.ndarray) -> np.ndarray:
        """Sums of scaled gains back to gains (inf where that overflows: the engine refuses)."""
        if self.unit is None:
            return sums
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(sums == 0, 0.0, sums * self.unit)

    def _per_user(
        self, what: str, k: float, user: np.ndarray, pos: np.ndarray, weights: np.ndarray | None
    ) -> np.ndarray:
        key = (what, k)
        if key not in self._cache:
            if len(pos) and pos.max() > k:
                m = pos <= k
                user, weights = user[m], None if weights is None else weights[m]
            sums = np.bincount(user, weights=weights, minlength=self.c.n_users)
            self._cache[key] = sums.astype(np.float64, copy=False)
        return self._cache[key]

    @staticmethod
    def _first_pos(users: np.ndarray, pos: np.ndarray, n_users: int) -> np.ndarray:
        """Per user, the smallest pos among the given rows (sorted by user, pos); +inf if none."""
        out = np.full(n_users, np.inf)
        if len(users):
            first = np.empty(len(users), dtype=bool)
            first[0] = True
            np.not_equal(users[1:], users[:-1], out=first[1:])
            out[users[first]] = pos[first]
        return out

    @cached_property
    def rr_rank(self) -> np.ndarray:
        users, pos = self.h_user, self.h_pos
        if self.conv.rr_target == "most-relevant":
            top = self.h_rel == self.c.max_relevance[users]
            users, pos = users[top], pos[top]
        return self._first_pos(users, pos, self.c.n_users)

    def hits(self, k: float) -> np.ndarray:
        return self._per_user("hits", k, self.h_user, self.h_pos, None)

    @cached_property
    def list_length(self) -> np.ndarray:
        return np.bincount(self.c.user, minlength=self.c.n_users).astype(np.float64)

    @cached_property
    def hits_at_r(self) -> np.ndarray:
        m = self.h_pos <= self.c.n_relevant[self.h_user]
        return np.bincount(self.h_user[m], minlength=self.c.n_users).astype(np.float64)

    @cached_property
    def _precision_at_hits(self) -> np.ndarray:
        """precision@j at each hit: its ordinal among the user's hits over its position."""
        return segment_positions(self.h_user) / self.h_pos

    def ap_sum(self, k: float) -> np.ndarray:
        return self._per_user("ap", k, self.h_user, self.h_pos, self._precision_at_hits)

    def cg(self, k: float) -> np.ndarray:
        """Sums of gains (scaled when ``unit`` is set; see ``unscaled``)."""
        weights = self._gain(self.g_rel, self.g_user)
        return self._per_user("cg", k, self.g_user, self.g_pos, weights)

    @cached_property
    def _discounted_gain(self) -> np.ndarray:
        return self._gain(self.g_rel, self.g_user) / np.log2(self.g_pos + 1.0)

    def dcg(self, k: float) -> np.ndarray:
        return self._per_user("dcg", k, self.g_user, self.g_pos, self._discounted_gain)

    def idcg(self, k: float) -> np.ndarray:
        c = self.c
        weights = self._gain(c.ideal_rel, c.ideal_user) / np.log2(c.ideal_pos + 1.0)
        return self._per_user("idcg", k, c.ideal_user, c.ideal_pos, weights)


def _precision(s: Sums, k: float) -> np.ndarray:
    if k == np.inf:  # precision@all: over the whole list of each user
        return _safe_div(s.hits(k), s.list_length)
    return s.hits(k) / k


def _r_precision(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.hits_at_r, s.c.n_relevant)


def _recall(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.hits(k), s.c.n_relevant)


def _f1(s: Sums, k: float) -> np.ndarray:
    p, r = _precision(s, k), _recall(s, k)
    return _safe_div(2 * p * r, p + r)


def _hit_rate(s: Sums, k: float) -> np.ndarray:
    return (s.hits(k) > 0).astype(np.float64)


def _mrr(s: Sums, k: float) -> np.ndarray:
    rank = s.rr_rank
    return np.where(rank <= k, 1.0 / rank, 0.0)


def _map(s: Sums, k: float) -> np.ndarray:
    r = s.c.n_relevant
    den = np.minimum(r, k) if s.conv.ap_denominator == "min" else r
    return _safe_div(s.ap_sum(k), den)


def _set_precision(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.hits(np.inf), s.list_length)


def _set_recall(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.hits(np.inf), s.c.n_relevant)


def _set_f1(s: Sums, k: float) -> np.ndarray:
    p, r = _set_precision(s, k), _set_recall(s, k)
    return _safe_div(2 * p * r, p + r)


def _ndcg(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.dcg(k), s.idcg(k))


KERNELS: dict[str, Callable[[Sums, int], np.ndarray]] = {
    "precision": _precision,
    "recall": _recall,
    "f1": _f1,
    "hit_rate": _hit_rate,
    "mrr": _mrr,
    "map": _map,
    "r_precision": _r_precision,
    "cg": lambda s, k: s.unscaled(s.cg(k)),
    "dcg": lambda s, k: s.unscaled(s.dcg(k)),
    "idcg": lambda s, k: s.unscaled(s.idcg(k)),
    "ndcg": _ndcg,
    "num_ret": lambda s, k: s.list_length,
    "num_rel": lambda s, k: s.c.n_relevant.astype(np.float64),
    "num_rel_ret": lambda s, k: s.hits(np.inf),
    "set_precision": _set_precision,
    "set_recall": _set_recall,
    "set_f1": _set_f1,
}
assert set(KERNELS) == set(REGISTRY), "every registered metric needs a kernel"


def compute(chunk: Chunk, specs: Iterable[MetricSpec], conv) -> dict[MetricSpec, np.ndarray]:
    """One array of per-user values for each spec; ``conv`` is the ``Settings`` (the kernels
    read gain, ap_denominator, rr_target and relevance_threshold)."""
    sums = Sums(chunk, conv)
    # K = infinity is the whole list: every `pos <= K` holds and min(R, K) is R.
    return {
        spec: KERNELS[spec.name](sums, np.inf if spec.k is None else spec.k) for spec in specs
    }
