"""Metric kernels: vectorized numpy over a ``Chunk``, one value per user, no loop over users.

Each kernel takes the per-chunk ``Sums`` and a cut-off K (``inf`` for ``@all``) and returns an
array of n_users values. Imports numpy and pure-Python modules only (a test checks it).
Per-user sums are ``np.bincount`` over the user codes of the rows with pos <= K; within-user
running counts are a global cumsum minus its value at each user's first row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from functools import cached_property

import numpy as np

from .chunk import Chunk, count_before, segment_positions, within_group_product
from .names import MetricSpec
from .registry import PER_USER, REGISTRY


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
    alone: ``g`` (positive gain, ``g_gain``) and ``h`` (relevant: the hits, each worth
    ``h_w``, None meaning 1).

    Under ``ties="expected"`` (McSherry and Najork 2008) every row of a tie group holds the
    group's mean hit and mean gain, so every measure linear in hits or gains (precision,
    recall, F1, R-precision, CG, DCG, NDCG, RBP, judged) is its expectation over all orders of
    the group; AP, RR, hit rate and bpref have their own closed forms below.
    """

    def __init__(self, chunk: Chunk, conv):
        self.c = chunk
        self.conv = conv
        self._cache: dict[tuple[str, float], np.ndarray] = {}
        top = chunk.max_relevance
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

    # -- per-user sums --------------------------------------------------------------------

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
        return Sums(self.c, dataclasses.replace(self.conv, gain="exponential"))

    @cached_property
    def relevant(self) -> np.ndarray:
        """Whether each row of the chunk is relevant (a hit)."""
        t = self.conv.relevance_threshold
        return self.c.rel > 0 if t is None else self.c.rel >= t

    @cached_property
    def judged_weight(self) -> np.ndarray:
        """Per row, 1 if judged (expected: the judged share of its tie group)."""
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
        return _safe_div(total, np.minimum(self.list_length, k))

    @cached_property
    def _hit_suffix_best(self) -> np.ndarray:
        """At each hit, the best precision at that hit or at any later one of its user
        (interpolated precision), as an exact reverse running maximum per user."""
        if not len(self.h_user):
            return np.zeros(0)
        precision = segment_positions(self.h_user) / self.h_pos
        # The maximum runs over integer keys: the user (reversed) above the value's rank.
        distinct, rank = np.unique(precision, return_inverse=True)
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
    return s.hit_rate(k)


def _mrr(s: Sums, k: float) -> np.ndarray:
    return s.rr(k)


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


# Below this AP, gm_map uses this value (trec_eval's MIN_GEO_MEAN): log(0) is -inf.
GM_FLOOR = 0.00001


def _gm_map(s: Sums, k: float) -> np.ndarray:
    return np.log(np.maximum(_map(s, k), GM_FLOOR))


def _bpref(s: Sums, k: float) -> np.ndarray:
    """trec_eval's bpref: each retrieved relevant item loses the share of the judged
    non-relevant items (at most R of them) ranked above it."""
    c = s.c
    relevant = s.relevant
    if s.expected:
        return _expected_bpref(s)
    above = count_before(c.user, c.judged & ~relevant)
    rows = np.flatnonzero(relevant)
    user, n = c.user[rows], above[rows]
    r = c.n_relevant[user]
    den = np.minimum(c.n_nonrelevant, c.n_relevant)[user]  # > 0 wherever n > 0
    term = 1.0 - np.minimum(n, r) / np.where(n > 0, den, 1)
    return _safe_div(np.bincount(user, term, minlength=c.n_users), c.n_relevant)


def _expected_bpref(s: Sums) -> np.ndarray:
    """bpref over all orders of each tie group: a relevant item of a group with b judged
    non-relevant items has y = 0..b of them above it, equally likely, besides the ``base``
    of earlier groups; sum_y min(base + y, R) is a difference of two closed-form sums."""
    c = s.c
    nonrel = s.group_sum((c.judged & ~s.relevant).astype(np.float64))
    base = s.before_group(nonrel)
    user = c.user[s.group_first]
    r, cap = c.n_relevant[user], np.minimum(c.n_nonrelevant, c.n_relevant)[user]

    def upto(t: np.ndarray) -> np.ndarray:  # sum_{x=0}^{t} min(x, R), for t >= -1
        return np.where(t <= r, t * (t + 1) / 2, r * (r + 1) / 2 + (t - r) * r)

    mean_lost = (upto(base + nonrel) - upto(base - 1)) / (nonrel + 1)
    term = 1.0 - mean_lost / np.where(cap > 0, cap, 1)
    return _safe_div(np.bincount(user, s.group_hits * term, minlength=c.n_users),
                     c.n_relevant)


def _iprec(s: Sums, level: float) -> np.ndarray:
    """trec_eval's iprec_at_recall: the interpolated precision at the hit that reaches
    recall ``level``, the (long)(level R + 0.9)-th hit (the first for level 0); 0 when the
    list never reaches it. (+0.9 is a ceiling that forgives float error in level R, as in
    trec_eval 9.0.8 and pytrec_eval; trec_eval's unreleased head rounds instead.)"""
    c = s.c
    need = np.floor(level * c.n_relevant + 0.9).astype(np.int64)
    found = s.hits(np.inf)
    first = np.searchsorted(s.h_user, np.arange(c.n_users))
    reach = (need <= found) & (found > 0)
    at = first + np.maximum(need, 1) - 1
    out = np.zeros(c.n_users)
    out[reach] = s._hit_suffix_best[at[reach]]
    return out


def _r_precision_mult(s: Sums, m: float) -> np.ndarray:
    """trec_eval's Rprec_mult: precision at c = (long)(m R + 0.9) items, 0 when c is 0."""
    c = np.floor(m * s.c.n_relevant + 0.9)
    return _safe_div(s.hits_within(c), c)


def _rbp(s: Sums, k: float) -> np.ndarray:
    p = s.conv.rbp_p
    weights = (1.0 - p) * np.power(p, s.h_pos - 1.0)
    if s.h_w is not None:
        weights *= s.h_w
    return np.bincount(s.h_user, weights, minlength=s.c.n_users)


def _rbp_residual(s: Sums, k: float) -> np.ndarray:
    """Moffat and Zobel's residual: the weight of the unjudged items of the list plus the
    weight of everything past its end."""
    c, p = s.c, s.conv.rbp_p
    unjudged = np.flatnonzero(s.judged_weight < 1)
    weights = (1.0 - p) * np.power(p, c.pos[unjudged] - 1.0) * (1 - s.judged_weight[unjudged])
    inside = np.bincount(c.user[unjudged], weights, minlength=c.n_users)
    return inside + np.power(p, s.list_length)


def _err(s: Sums, k: float) -> np.ndarray:
    weights = s.err_stop * s.err_decay / s.g_pos
    return s._per_user("err", k, s.g_user, s.g_pos, weights)


def _arp(s: Sums, k: float) -> np.ndarray:
    return s.mean_over_list("arp", k, s.c.popularity[s.c.item])


def _long_tail(s: Sums, k: float) -> np.ndarray:
    return s.mean_over_list("long_tail", k, s.c.long_tail[s.c.item].astype(np.float64))


def _novelty(s: Sums, k: float) -> np.ndarray:
    """-log2(pop / U) per item; an item unseen in training counts log2(U + 1), the largest
    finite value (SPEC section 7)."""
    c = s.c
    u = float(c.n_train_users)
    pop = c.popularity
    info = np.where(pop > 0, -np.log2(np.where(pop > 0, pop, 1.0) / max(u, 1.0)),
                    np.log2(u + 1.0))
    return s.mean_over_list("novelty", k, info[c.item])


_ROWS = 1 << 18  # rows per block of the feature kernels: rows x dims stays small


def _ild(s: Sums, k: float) -> np.ndarray:
    """Over pairs of unit vectors, sum_{i<j} v_i . v_j = (|sum v|^2 - sum |v|^2) / 2, so a
    list of n costs n vectors, not n^2 pairs. NaN (not scored) below 2 items with features."""
    c = s.c
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


def _judged(s: Sums, k: float) -> np.ndarray:
    return _safe_div(s.judged(k), np.minimum(s.list_length, k))


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
    "bpref": _bpref,
    "gm_map": _gm_map,
    "iprec": _iprec,
    "r_precision_mult": _r_precision_mult,
    "rbp": _rbp,
    "rbp_residual": _rbp_residual,
    "err": _err,
    "judged": _judged,
    "dcg_burges": lambda s, k: s.burges.unscaled(s.burges.dcg(k)),
    "ndcg_burges": lambda s, k: _ndcg(s.burges, k),
    "arp": _arp,
    "long_tail": _long_tail,
    "novelty": _novelty,
    "ild": _ild,
    "serendipity": _serendipity,
}
assert set(KERNELS) == {n for n, m in REGISTRY.items() if m.scope == PER_USER}, (
    "every per-user metric needs a kernel here (corpus metrics live in corpus.py)")


def compute(chunk: Chunk, specs: Iterable[MetricSpec], conv) -> dict[MetricSpec, np.ndarray]:
    """One array of per-user values for each spec; ``conv`` is the ``Settings`` (the kernels
    read gain, ap_denominator, rr_target and relevance_threshold)."""
    sums = Sums(chunk, conv)
    # K = infinity is the whole list: every `pos <= K` holds and min(R, K) is R.
    # A metric measured at levels gets its level (iprec@0.5) in place of K.
    return {
        spec: KERNELS[spec.name](sums, spec.level if spec.level is not None
                                 else np.inf if spec.k is None else spec.k)
        for spec in specs if REGISTRY[spec.name].scope == PER_USER
    }
