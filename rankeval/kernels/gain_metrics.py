"""trec_eval's experimental and pooling measures: binG, G, ndcg_rel, Rndcg, infAP, unj,
utility, num_q. Numpy only; kernels as in ``metrics.py``.

trec_eval computes each with a walk down one ranked list beside its ideal list. Here every walk
is a running sum over all users' rows at once (``within_group_sum``: a loop over places in the
list, not over users), and a value of the ideal list at a row's place is looked up by (user,
position).

The gain of a grade is the grade itself (trec_eval's default gains; unjudged items gain 0), and
the ideal list is the user's positive grades, highest first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankeval.errors import OptionError
from rankeval.kernels.chunk import count_before_at, segment_positions, within_group_sum
from rankeval.kernels.sums import Sums, safe_div
from rankeval.params import numbers

# trec_eval's INFAP_EPSILON: keeps infAP's precision estimate defined with nothing judged above
INFAP_EPSILON = 0.00001


def _running(user: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row, the sum of ``values`` over the user's rows up to and including it, added in
    list order (so each user's value is the same in any chunk)."""
    return within_group_sum(segment_positions(user), values)


def _sum(user: np.ndarray, values: np.ndarray, n_users: int) -> np.ndarray:
    """Per user, the sum of ``values`` over its rows (float, also when there are none)."""
    return np.bincount(user, values, minlength=n_users).astype(np.float64, copy=False)


def _row_gain(s: Sums) -> np.ndarray:
    """Each row's gain: its grade when positive (as the gains setting maps it), else 0."""
    return s.mapped(np.maximum(s.c.rel, 0.0))


def _at_place(user: np.ndarray, pos: np.ndarray, running: np.ndarray, query_user: np.ndarray,
              query_pos: np.ndarray) -> np.ndarray:
    """The running value of the last row of ``query_user`` at a position <= ``query_pos``
    (rows sorted by user, then position), 0 where there is none."""
    if not len(user):
        return np.zeros(len(query_user))
    span = float(max(pos.max(initial=0), query_pos.max(initial=0)) + 1)
    keys = user * span + pos
    at = np.searchsorted(keys, query_user * span + query_pos, side="right") - 1
    found = (at >= 0) & (user[np.maximum(at, 0)] == query_user)
    return np.where(found, running[np.maximum(at, 0)], 0.0)


class _Ideal:
    """Each user's ideal list of positive gains, with running sums along it."""

    def __init__(self, s: Sums):
        c = s.c
        self.user, self.pos, self.gain = c.ideal_user, c.ideal_pos, s.mapped(c.ideal_rel)
        if s.grades is not None:  # a grade may map to gain 0: at the end of its list (in order)
            keep = self.gain > 0
            self.user, self.pos, self.gain = self.user[keep], self.pos[keep], self.gain[keep]
        self.size = np.bincount(self.user, minlength=c.n_users)  # P: items with a gain
        self.total = _sum(self.user, self.gain, c.n_users)

    def running_at(self, running: np.ndarray, user: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """A running sum along the ideal list at depth min(pos, P) of each user."""
        return _at_place(self.user, self.pos, running, user, pos.astype(np.float64))


def _bin_g(s: Sums, k: float) -> np.ndarray:
    """trec_eval's binG: each retrieved relevant item earns 1 / log2(2 + the non-relevant
    items above it); the sum over R."""
    before = segment_positions(s.h_user) - 1  # relevant items above
    term = 1.0 / np.log2(2.0 + (s.h_pos - 1 - before))
    return safe_div(_sum(s.h_user, term, s.c.n_users), s.c.n_relevant)


def _g(s: Sums, k: float) -> np.ndarray:
    """trec_eval's G: an item with gain g at place i earns g / log2(2 + cost_i - gained_i),
    where gained_i is the gain of the list down to i and cost_i the sum of max(ideal gain,
    1) down to i; the sum over the ideal list's total gain."""
    c = s.c
    ideal = _Ideal(s)
    gain = _row_gain(s)
    rows = np.flatnonzero(gain != 0)  # only they earn: the sums over them alone (rows of 0
    user, pos, gain = c.user[rows], c.pos[rows], gain[rows]  # add 0, so as many bits)
    gained = _running(user, gain)
    extra = _running(ideal.user, np.maximum(ideal.gain, 1.0) - 1.0)  # cost beyond 1 a place
    cost = pos + ideal.running_at(extra, user, pos)
    term = gain / np.log2(2.0 + cost - gained)
    return safe_div(_sum(user, term, c.n_users), ideal.total)


class _Discounted:
    """The list's rows with a gain and its running DCG at them; the ideal list's running DCG,
    and both whole."""

    def __init__(self, s: Sums):
        c = s.c
        self.ideal = ideal = _Ideal(s)
        gain = _row_gain(s)
        rows = np.flatnonzero(gain > 0)
        self.user, self.pos = c.user[rows], c.pos[rows]
        self.dcg = _running(self.user, gain[rows] / np.log2(self.pos + 1.0))
        self.ideal_dcg = _running(ideal.user, ideal.gain / np.log2(ideal.pos + 1.0))
        self.whole = safe_div(_last(self.user, self.dcg, c.n_users),
                               _last(ideal.user, self.ideal_dcg, c.n_users))  # NDCG@n


def _last(user: np.ndarray, running: np.ndarray, n_users: int) -> np.ndarray:
    """Per user, the running value at its last row (0 for a user without rows)."""
    out = np.zeros(n_users)
    if len(user):
        last = np.append(np.flatnonzero(user[1:] != user[:-1]), len(user) - 1)
        out[user[last]] = running[last]
    return out


def _ndcg_rel(s: Sums, k: float) -> np.ndarray:
    """trec_eval's ndcg_rel: NDCG at each item with a gain, averaged over the ideal list's
    items with a gain; one not retrieved counts the NDCG of the whole list."""
    n = s.c.n_users
    d = _Discounted(s)
    ideal = d.ideal
    at_depth = ideal.running_at(d.ideal_dcg, d.user, d.pos)
    total = _sum(d.user, d.dcg / at_depth, n)
    total += (ideal.size - np.bincount(d.user, minlength=n)) * d.whole
    return np.where(total > 0, safe_div(total, ideal.size.astype(np.float64)), 0.0)


def _r_ndcg(s: Sums, k: float) -> np.ndarray:
    """trec_eval's Rndcg: NDCG averaged over the depths where the ideal list's gain changes
    (the end of each grade in it), plus the whole list when it runs more than one item past
    the ideal list's items with a gain; 0 when the user has no relevant item, undefined when
    its relevant items have no gain (trec_eval's 0/0)."""
    c = s.c
    d = _Discounted(s)
    ideal = d.ideal
    nxt = np.append(ideal.gain[1:], 0.0)
    ends = np.append(ideal.user[1:] != ideal.user[:-1], True)
    change = np.flatnonzero(ends | (nxt != ideal.gain))  # the last item of each grade
    b_user, b_pos = ideal.user[change], ideal.pos[change].astype(np.float64)
    at = _at_place(d.user, d.pos.astype(np.float64), d.dcg, b_user, b_pos)
    total = _sum(b_user, at / d.ideal_dcg[change], c.n_users)
    points = np.bincount(b_user, minlength=c.n_users).astype(np.float64)
    past = (s.list_length > ideal.size + 1) & (ideal.size > 0)
    total += np.where(past, d.whole, 0.0)
    points += past
    mean = np.divide(total, points, out=np.full(c.n_users, np.nan), where=points > 0)
    return np.where(c.n_relevant > 0, mean, 0.0)


def _inf_ap(s: Sums, k: float) -> np.ndarray:
    """Yilmaz and Aslam's inferred AP as trec_eval computes it: at each relevant item,
    precision estimated from the judged items above it, with the items outside the pool
    (not in the truth) as non-relevant and those in the pool but unjudged (a negative
    relevance) left out; the sum over R."""
    c = s.c
    # a metric that reads judgements gets them in its chunk
    assert c.judged is not None and c.pooled is not None
    relevant, pooled = s.relevant, c.pooled
    rows = np.flatnonzero(relevant)
    j = (c.pos[rows] - 1).astype(np.float64)  # items above
    r = count_before_at(c.user, relevant, rows)
    n = count_before_at(c.user, c.judged & ~relevant, rows)
    u = count_before_at(c.user, pooled & ~c.judged, rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = (1 / (j + 1) + (j / (j + 1)) * ((r + n + u) / j)
                    * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, estimate)
    return safe_div(_sum(c.user[rows], term, c.n_users), c.n_relevant)


def _yaap(s: Sums, k: float) -> np.ndarray:
    """Robertson's yet another AP: log((1 + S) / (1 + R - S)), S the sum of the precisions at
    the relevant items retrieved."""
    found = s.ap_sum(np.inf)
    return np.log((1.0 + found) / (1.0 + s.c.n_relevant - found))


def _unjudged(s: Sums, k: float) -> np.ndarray:
    """trec_eval's unj: unjudged items in the top K over K (a list shorter than K is
    filled with judged items); @all: over the list."""
    unjudged = s.list_length - s.judged(np.inf) if k == np.inf else np.minimum(
        s.list_length, k) - s.judged(k)
    return safe_div(unjudged, s.list_length if k == np.inf else np.full(s.c.n_users, k))


def _utility(s: Sums, k: float) -> np.ndarray:
    """trec_eval's utility: a (relevant retrieved) + b (non-relevant retrieved) + c (relevant
    missed) + d (non-relevant not retrieved: the collection's size N less the rest), with the
    ``coefficients`` parameter's a,b,c,d (default 1,-1,0,0)."""
    a, b, c, d = numbers(s.params.get("coefficients", "1,-1,0,0"))
    found, ret, rel = s.hits(np.inf), s.list_length, s.c.n_relevant
    out = a * found + b * (ret - found) + c * (rel - found)
    if d:  # the settings refuse a d without the collection's size
        rest = s.conv.collection_size + found - ret - rel  # non-relevant, not retrieved
        if len(rest) and rest.min() < 0:
            need = int((ret + rel - found).max())
            raise OptionError(f"{{option}} {s.conv.collection_size:,} is smaller than the items "
                              f"a user retrieved or has relevant ({need:,}): the collection "
                              "holds them all, so utility's fourth count cannot be negative",
                              "collection_size")
        out = out + d * rest
    return out


KERNELS: dict[str, Callable[[Sums, float], np.ndarray]] = {
    "bin_g": _bin_g, "g": _g, "ndcg_rel": _ndcg_rel, "r_ndcg": _r_ndcg, "inf_ap": _inf_ap,
    "unjudged": _unjudged, "utility": _utility, "yaap": _yaap,
}
