"""Metric kernels: vectorized numpy over a ``Chunk``, one value per user, no loop over users.

Each kernel takes the per-chunk ``Sums`` and a cut-off K (``inf`` for ``@all``) and returns an
array of n_users values.
Per-user sums are ``np.bincount`` over the user codes of the rows with pos <= K; within-user
running counts are a global cumsum minus its value at each user's first row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .metric_names import MetricSpec
from .ranking import Chunk
from .registry import REGISTRY

GAINS = ("linear", "exponential")
AP_DENOMINATORS = ("min", "relevant")
RR_TARGETS = ("first-relevant", "most-relevant")


@dataclass(frozen=True)
class Conventions:
    """The choices that change metric values (see SPEC section 3)."""

    gain: str = "linear"
    ap_denominator: str = "min"
    rr_target: str = "first-relevant"
    relevance_threshold: float | None = None  # None: relevance > 0 is relevant


def gain(relevance: np.ndarray, kind: str) -> np.ndarray:
    """linear: max(r, 0); exponential: 2^r - 1 for r > 0, else 0."""
    if kind == "linear":
        return np.maximum(relevance, 0.0)
    return np.where(relevance > 0, np.exp2(np.maximum(relevance, 0.0)) - 1.0, 0.0)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


class Sums:
    """Per-user sums over one chunk, computed once and shared by every metric and K."""

    def __init__(self, chunk: Chunk, conv: Conventions):
        self.c = chunk
        self.conv = conv
        self._cache: dict[tuple[str, int], np.ndarray] = {}

    def _per_user(
        self, what: str, k: float, user: np.ndarray, pos: np.ndarray, weights: np.ndarray
    ) -> np.ndarray:
        key = (what, k)
        if key not in self._cache:
            m = pos <= k
            self._cache[key] = np.bincount(user[m], weights=weights[m], minlength=self.c.n_users)
        return self._cache[key]

    @cached_property
    def hit(self) -> np.ndarray:
        t = self.conv.relevance_threshold
        rel = self.c.rel
        return (rel > 0 if t is None else rel >= t).astype(np.float64)

    @cached_property
    def discount(self) -> np.ndarray:
        return 1.0 / np.log2(self.c.pos + 1.0)

    @cached_property
    def running_hits(self) -> np.ndarray:
        """Hits at or above each row within its user: the numerator of precision@j."""
        cum = np.cumsum(self.hit)
        start = np.arange(len(cum)) - (self.c.pos - 1)
        return cum - cum[start] + self.hit[start]

    def _first_pos(self, mask: np.ndarray) -> np.ndarray:
        """Per user, the smallest pos where mask holds; +inf where it never does."""
        out = np.full(self.c.n_users, np.inf)
        users, pos = self.c.user[mask], self.c.pos[mask]
        if len(users):
            first = np.empty(len(users), dtype=bool)
            first[0] = True
            np.not_equal(users[1:], users[:-1], out=first[1:])
            out[users[first]] = pos[first]  # rows are sorted by (user, pos)
        return out

    @cached_property
    def rr_rank(self) -> np.ndarray:
        hit = self.hit > 0
        if self.conv.rr_target == "most-relevant":
            hit &= self.c.rel == self.c.max_relevance[self.c.user]
        return self._first_pos(hit)

    def hits(self, k: float) -> np.ndarray:
        return self._per_user("hits", k, self.c.user, self.c.pos, self.hit)

    @cached_property
    def list_length(self) -> np.ndarray:
        return np.bincount(self.c.user, minlength=self.c.n_users).astype(np.float64)

    @cached_property
    def hits_at_r(self) -> np.ndarray:
        m = self.c.pos <= self.c.n_relevant[self.c.user]
        return np.bincount(self.c.user[m], weights=self.hit[m], minlength=self.c.n_users)

    def ap_sum(self, k: float) -> np.ndarray:
        weights = self.hit * self.running_hits / self.c.pos
        return self._per_user("ap", k, self.c.user, self.c.pos, weights)

    def cg(self, k: float) -> np.ndarray:
        return self._per_user("cg", k, self.c.user, self.c.pos, gain(self.c.rel, self.conv.gain))

    def dcg(self, k: float) -> np.ndarray:
        weights = gain(self.c.rel, self.conv.gain) * self.discount
        return self._per_user("dcg", k, self.c.user, self.c.pos, weights)

    def idcg(self, k: float) -> np.ndarray:
        c = self.c
        weights = gain(c.ideal_rel, self.conv.gain) / np.log2(c.ideal_pos + 1.0)
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
    "cg": Sums.cg,
    "dcg": Sums.dcg,
    "idcg": Sums.idcg,
    "ndcg": _ndcg,
}
assert set(KERNELS) == set(REGISTRY), "every registered metric needs a kernel"


def compute(
    chunk: Chunk, specs: Iterable[MetricSpec], conv: Conventions
) -> dict[MetricSpec, np.ndarray]:
    """One array of per-user values for each spec."""
    sums = Sums(chunk, conv)
    # K = infinity is the whole list: every `pos <= K` holds and min(R, K) is R.
    return {
        spec: KERNELS[spec.name](sums, np.inf if spec.k is None else spec.k) for spec in specs
    }
