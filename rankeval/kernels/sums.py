"""Per-user sums over one chunk, shared by every kernel and K: hits, gains, discounted gains,
AP shares, reciprocal ranks, under deterministic or expected (tie-aware) orders. Numpy only.
Per-user sums are ``np.bincount`` over the user codes of the rows with pos <= K; within-user
running counts are a global cumsum minus its value at each user's first row.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any

import numpy as np

from rankeval.kernels.chunk import Chunk, count_before, segment_positions, within_group_product
from rankeval.kernels.distinct import with_inverse
from rankeval.params import gain_pairs
from rankeval.settings import Settings


def gain(relevance: np.ndarray, kind: str) -> np.ndarray:
    """linear: max(r, 0); exponential: 2^r - 1 for r > 0, else 0; binary: 1 for r > 0."""
    if kind == "linear":
        return np.maximum(relevance, 0.0)
    if kind == "binary":
        return (relevance > 0).astype(np.float64)
    return np.where(relevance > 0, np.exp2(np.maximum(relevance, 0.0)) - 1.0, 0.0)


# Past this gain a sum of gains may overflow float64 (2^1024): gains are then divided by each
# user's largest gain, which leaves NDCG exact and finite, and CG/DCG/IDCG are multiplied back
# (and refused by the engine when that overflows).
_SCALE_FROM = 2.0**960


def scaled_gain(relevance: np.ndarray, top: np.ndarray, kind: str) -> np.ndarray:
    """gain(r) / gain(top), computed without forming either (top >= r > 0 per row)."""
    if kind == "linear":
        return relevance / top
    if kind == "binary":
        return np.ones(len(relevance))
    ln2 = np.log(2.0)
    # (2^r - 1) / (2^t - 1) = 2^(r - t) (1 - 2^-r) / (1 - 2^-t)
    return np.exp2(relevance - top) * np.expm1(-relevance * ln2) / np.expm1(-top * ln2)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


class Sums:
    """Per-user sums over one chunk, computed once and shared by every metric and K.

    Only rows with a positive relevance can add to any metric (gain and relevance are 0 at or
    below 0), and they are usually a small share of the rows, so the sums run over those rows
    alone: ``g`` (positive gain, ``g_gain``) and ``h`` (relevant: the hits, each worth
    ``h_w``, None meaning 1).

    Under ``ties="expected"`` (McSherry and Najork 2008) every row of a tie group holds the
    group's mean hit and mean gain, so every measure linear in hits or gains (precision,
    recall, F1, R-precision, CG, DCG, NDCG, RBP, judged) is its expectation over all orders of
    the group; AP, RR, hit rate and bpref have their own closed forms below.
    """

    def __init__(self, chunk: Chunk, conv: Settings, params: dict | None = None):
        self.c = chunk
        self.conv = conv
        self.params = params or {}  # the kernel's own parameters (set_f1's beta)
        self._cache: dict[tuple[str, float], np.ndarray] = {}
        self.memo: dict[Any, Any] = {}  # what a kernel module keeps per chunk (diversity.py)
        self.grades = None if conv.gains is None else gain_pairs(conv.gains)
        top = self.mapped(chunk.max_relevance)
        largest = float(top.max()) if len(top) else 0.0
        # Per-user divisor of every gain, or None: gains are used as they are.
        self.unit = None
        with np.errstate(over="ignore"):
            if largest > 0 and gain(np.array([largest]), conv.gain)[0] >= _SCALE_FROM:
                self.unit = gain(np.where(top > 0, top, 1.0), conv.gain)
        self.expected = conv.ties == "expected" and chunk.tie_start is not None
        rel = chunk.rel
        g = np.flatnonzero(rel > 0)
        self.g_user, self.g_pos, self.g_rel = chunk.user[g], chunk.pos[g], rel[g]
        if self.expected:
            self._spread_over_groups()
            return
        self.g_gain = self._gain(self.g_rel, self.g_user)
        t = conv.relevance_threshold
        if t is not None and t <= 0:  # judged items of grade 0 are hits too (trec_eval -l 0)
            hits = np.flatnonzero(rel >= t)
            self.h_user, self.h_pos, self.h_rel = chunk.user[hits], chunk.pos[hits], rel[hits]
        else:
            h = slice(None) if t is None else self.g_rel >= t
            self.h_user, self.h_pos, self.h_rel = self.g_user[h], self.g_pos[h], self.g_rel[h]
        self.h_w = None

    # -- tie groups (expected mode) -------------------------------------------------------

    @cached_property
    def group(self) -> np.ndarray:
        """Each row's tie group, numbered 0.. in row order (a group of one for untied rows)."""
        c = self.c
        start = c.pos == c.tie_start
        return np.cumsum(start) - 1

    @cached_property
    def group_first(self) -> np.ndarray:
        """Row index of each group's first row."""
        return np.flatnonzero(self.c.pos == self.c.tie_start)

    @cached_property
    def group_size(self) -> np.ndarray:
        return np.bincount(self.group).astype(np.float64)

    @cached_property
    def offset(self) -> np.ndarray:
        """1-based place of each row in its tie group."""
        return (self.c.pos - self.c.tie_start + 1).astype(np.int64)

    def group_sum(self, values: np.ndarray) -> np.ndarray:
        return np.bincount(self.group, values, minlength=len(self.group_first))

    def before_group(self, per_group: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``per_group`` over the user's earlier groups."""
        return count_before(self.c.user[self.group_first], per_group)

    @cached_property
    def group_hits(self) -> np.ndarray:
        return self.group_sum(self.relevant.astype(np.float64))

    def _spread_over_groups(self) -> None:
        """Each row holds its group's mean hit and mean gain (the expectation at its place)."""
        c = self.c
        n = self.group_size[self.group]
        gains = np.zeros(len(c.rel))
        positive = c.rel > 0
        gains[positive] = self._gain(c.rel[positive], c.user[positive])
        mean_gain = self.group_sum(gains)[self.group] / n
        g = np.flatnonzero(mean_gain > 0)
        self.g_user, self.g_pos, self.g_gain = c.user[g], c.pos[g], mean_gain[g]
        mean_hit = self.group_hits[self.group] / n
        h = np.flatnonzero(mean_hit > 0)
        self.h_user, self.h_pos, self.h_w = c.user[h], c.pos[h], mean_hit[h]

    def _none_before(self, targets: np.ndarray) -> np.ndarray:
        """Per row, the chance that no target item of its group lies at an earlier place of
        the group, the group's ``targets`` being placed uniformly at random."""
        n = self.group_size[self.group]
        t = targets[self.group]
        j = self.offset
        # P(none in the first j) = prod_{i <= j} (n - t - i + 1) / (n - i + 1)
        upto = within_group_product(j, (n - t - j + 1) / (n - j + 1))
        before = np.ones(len(upto))
        later = j > 1
        before[later] = upto[np.flatnonzero(later) - 1]
        return before

    @cached_property
    def graded(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(user, position, gain) of the rows with a gain, the gain being the grade scaled
        to [0, 1] by the user's highest grade when that exceeds 1 (trec_eval 10.0's RBP);
        under expected ties, each row holds its group's mean."""
        c = self.c
        if not self.expected:  # the rows with a grade above 0 alone: they are few
            rows = np.flatnonzero(c.rel > 0)
            rel, top = c.rel[rows], c.max_relevance[c.user[rows]]
            return c.user[rows], c.pos[rows], np.where(top > 1, rel / np.where(top > 1, top, 1.0),
                                                        rel)
        rel = np.where(c.rel > 0, c.rel, 0.0)
        top = c.max_relevance[c.user]
        w = np.where(top > 1, rel / np.where(top > 1, top, 1.0), rel)
        w = (self.group_sum(w) / self.group_size)[self.group]
        rows = np.flatnonzero(w > 0)
        return c.user[rows], c.pos[rows], w[rows]

    @cached_property
    def raw(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(user, position, gain) of the relevant rows, the gain being the grade itself
        (ranx's RBP); under expected ties, each row holds its group's mean."""
        c = self.c
        t = self.conv.relevance_threshold
        relevant = c.rel > 0 if t is None else c.rel >= t
        if not self.expected:  # the relevant rows with a grade above 0 alone: they are few
            rows = np.flatnonzero(relevant & (c.rel > 0))
            return c.user[rows], c.pos[rows], c.rel[rows]
        w = np.where(relevant, c.rel, 0.0)
        w = (self.group_sum(w) / self.group_size)[self.group]
        rows = np.flatnonzero(w > 0)
        return c.user[rows], c.pos[rows], w[rows]

    # -- per-user sums --------------------------------------------------------------------

    def mapped(self, rel: np.ndarray) -> np.ndarray:
        """Grades as the gains setting maps them (a grade not named keeps its value)."""
        if self.grades is None:
            return rel
        out = rel.copy()
        for grade, value in zip(*self.grades, strict=True):
            out[rel == grade] = value
        return out

    def _gain(self, rel: np.ndarray, user: np.ndarray) -> np.ndarray:
        rel = self.mapped(rel)
        if self.unit is None:
            return gain(rel, self.conv.gain)
        # gains map grades in order (build.checks), so the highest grade's is the highest
        return scaled_gain(rel, self.mapped(self.c.max_relevance[user]), self.conv.gain)

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
    def _rr_rank(self) -> np.ndarray:
        users, pos = self.h_user, self.h_pos
        if self.conv.rr_target == "most-relevant":
            top = self.h_rel == self.c.max_relevance[users]
            users, pos = users[top], pos[top]
        return self._first_pos(users, pos, self.c.n_users)

    @cached_property
    def rr_target(self) -> np.ndarray:
        """Whether each row is what RR looks for: relevant, or of the user's top relevance."""
        c = self.c
        if self.conv.rr_target == "most-relevant":
            return self.relevant & (c.rel == c.max_relevance[c.user])
        return self.relevant

    def rr(self, k: float) -> np.ndarray:
        """Reciprocal rank at K (expected: each place of the first group holding a target,
        weighted by the chance that the first target lands there)."""
        c = self.c
        if not self.expected:
            rank = self._rr_rank
            return np.where(rank <= k, 1.0 / rank, 0.0)
        targets = self.group_sum(self.rr_target.astype(np.float64))
        first_group = (targets > 0) & (self.before_group(targets > 0) == 0)
        rows = np.flatnonzero(first_group[self.group])
        n, t = self.group_size[self.group[rows]], targets[self.group[rows]]
        j = self.offset[rows]
        chance = self._none_before(targets)[rows] * t / (n - j + 1)
        return self._per_user("rr", k, c.user[rows], c.pos[rows], chance / c.pos[rows])

    def hit_rate(self, k: float) -> np.ndarray:
        """1 if a hit lies in the top K (expected: 1 - the hypergeometric chance that the
        group across K keeps all its hits below K, when no earlier group has one)."""
        if not self.expected:
            return (self.hits(k) > 0).astype(np.float64)
        c = self.c
        length = self.list_length.astype(np.int64)
        has = length > 0
        first = np.searchsorted(c.user, np.arange(c.n_users))
        last = first + np.minimum(length, int(min(k, 2**62))) - 1  # the row at min(K, n)
        rows = last[has]
        g = self.group[rows]
        none = self._none_before(self.group_hits)  # before each row; the row itself next
        n, r, j = self.group_size[g], self.group_hits[g], self.offset[rows]
        miss = none[rows] * (n - r - j + 1) / (n - j + 1)
        out = np.zeros(c.n_users)
        out[has] = 1.0 - np.where(self.before_group(self.group_hits)[g] > 0, 0.0, miss)
        return out

    def hits(self, k: float) -> np.ndarray:
        return self._per_user("hits", k, self.h_user, self.h_pos, self.h_w)

    @cached_property
    def list_length(self) -> np.ndarray:
        return np.bincount(self.c.user, minlength=self.c.n_users).astype(np.float64)

    @cached_property
    def hits_at_r(self) -> np.ndarray:
        return self.hits_within(self.c.n_relevant)

    def hits_within(self, depth: np.ndarray) -> np.ndarray:
        """Hits at places up to a per-user depth."""
        m = self.h_pos <= depth[self.h_user]
        w = None if self.h_w is None else self.h_w[m]
        return np.bincount(self.h_user[m], w, minlength=self.c.n_users).astype(np.float64)

    @cached_property
    def _precision_at_hits(self) -> np.ndarray:
        """Each hit's share of AP before the division: precision at the hit (expected:
        McSherry and Najork's (r/n) (H + 1 + (j - 1)(r - 1)/(n - 1)) / pos, H hits in the
        user's earlier groups, j the place in a group of n holding r hits)."""
        if not self.expected:
            return segment_positions(self.h_user) / self.h_pos
        hit_groups = self.group[np.flatnonzero(self.group_hits[self.group] > 0)]
        n, r = self.group_size[hit_groups], self.group_hits[hit_groups]
        earlier = self.before_group(self.group_hits)[hit_groups]
        j = self.offset[self.group_hits[self.group] > 0]
        share = np.where(n > 1, (j - 1) * (r - 1) / np.maximum(n - 1, 1), 0.0)
        return (r / n) * (earlier + 1 + share) / self.h_pos

    def ap_sum(self, k: float) -> np.ndarray:
        return self._per_user("ap", k, self.h_user, self.h_pos, self._precision_at_hits)

    def cg(self, k: float) -> np.ndarray:
        """Sums of gains (scaled when ``unit`` is set; see ``unscaled``)."""
        return self._per_user("cg", k, self.g_user, self.g_pos, self.g_gain)

    @cached_property
    def _discounted_gain(self) -> np.ndarray:
        return self.g_gain / np.log2(self.g_pos + 1.0)

    def dcg(self, k: float) -> np.ndarray:
        return self._per_user("dcg", k, self.g_user, self.g_pos, self._discounted_gain)

    def idcg(self, k: float) -> np.ndarray:
        c = self.c
        weights = self._gain(c.ideal_rel, c.ideal_user) / np.log2(c.ideal_pos + 1.0)
        return self._per_user("idcg", k, c.ideal_user, c.ideal_pos, weights)

    @cached_property
    def burges(self) -> Sums:
        """The same sums with exponential gain (ranx's dcg_burges and ndcg_burges)."""
        if self.conv.gain == "exponential":
            return self
        return Sums(self.c, dataclasses.replace(self.conv, gain="exponential"), self.params)

    @cached_property
    def relevant(self) -> np.ndarray:
        """Whether each row of the chunk is relevant (a hit)."""
        t = self.conv.relevance_threshold
        return self.c.rel > 0 if t is None else self.c.rel >= t

    @cached_property
    def judged_weight(self) -> np.ndarray:
        """Per row, 1 if judged (expected: the judged share of its tie group)."""
        assert self.c.judged is not None  # a metric that reads judgements gets them in its chunk
        judged = self.c.judged.astype(np.float64)
        if not self.expected:
            return judged
        return (self.group_sum(judged) / self.group_size)[self.group]

    def judged(self, k: float) -> np.ndarray:
        return self._per_user("judged", k, self.c.user, self.c.pos, self.judged_weight)

    def spread(self, values: np.ndarray) -> np.ndarray:
        """Per-row values, each replaced by its tie group's mean in expected mode (the
        expectation at that place for any measure that adds up per-row values)."""
        if not self.expected:
            return values
        return (self.group_sum(values) / self.group_size)[self.group]

    def mean_over_list(self, what: str, k: float, values: np.ndarray) -> np.ndarray:
        """Per user, the mean of per-row values over the top K (0 for an empty list)."""
        c = self.c
        total = self._per_user(what, k, c.user, c.pos, self.spread(values))
        return safe_div(total, np.minimum(self.list_length, k))

    @cached_property
    def _hit_suffix_best(self) -> np.ndarray:
        """At each hit, the best precision at that hit or at any later one of its user
        (interpolated precision), as an exact reverse running maximum per user."""
        if not len(self.h_user):
            return np.zeros(0)
        precision = segment_positions(self.h_user) / self.h_pos
        # The maximum runs over integer keys: the user (reversed) above the value's rank.
        distinct, rank = with_inverse(precision)
        key = (self.c.n_users - 1 - self.h_user.astype(np.int64)) * len(distinct) + rank
        best = np.maximum.accumulate(key[::-1])[::-1]
        return distinct[best - (key - rank)]

    @cached_property
    def err_decay(self) -> np.ndarray:
        """At each positive row, prod (1 - R_i) over the user's earlier rows (ERR's chance
        that the reader gets there), multiplied in list order as Chapelle et al. write it."""
        stop = self.err_stop
        decay = np.ones(len(stop))
        ordinal = segment_positions(self.g_user)
        for o in range(2, int(ordinal.max(initial=0)) + 1):  # a loop over ranks, not users
            at = np.flatnonzero(ordinal == o)
            decay[at] = decay[at - 1] * (1.0 - stop[at - 1])
        return decay

    @cached_property
    def err_stop(self) -> np.ndarray:
        top = self.conv.err_max_grade
        return np.exp2(self.g_rel - top) - np.exp2(-top)  # (2^g - 1) / 2^top, exactly
