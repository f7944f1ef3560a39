"""trec_eval's, ir_measures' and ranx's measures beyond the classic ones: gm_map, bpref,
interpolated precision, precision at multiples of R, RBP and its residual, ERR, judged@K,
compatibility.
Numpy only; kernels as in ``metrics.py``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankeval.kernels.chunk import count_before_at
from rankeval.kernels.sums import Sums, safe_div
from rankeval.params import numbers

# Below this AP or bpref, gm_map and gm_bpref use this value (trec_eval's MIN_GEO_MEAN): log(0)
# is -inf.
GM_FLOOR = 0.00001


def _bpref(s: Sums, k: float) -> np.ndarray:
    """trec_eval's bpref: each retrieved relevant item loses the share of the judged
    non-relevant items (at most R of them) ranked above it."""
    c = s.c
    relevant = s.relevant
    if s.expected:
        return _expected_bpref(s)
    # a metric that reads judgements gets them in its chunk
    assert c.judged is not None and c.n_nonrelevant is not None
    rows = np.flatnonzero(relevant)
    user, n = c.user[rows], count_before_at(c.user, c.judged & ~relevant, rows)
    r = c.n_relevant[user]
    den = np.minimum(c.n_nonrelevant, c.n_relevant)[user]  # > 0 wherever n > 0
    term = 1.0 - np.minimum(n, r) / np.where(n > 0, den, 1)
    return safe_div(np.bincount(user, term, minlength=c.n_users), c.n_relevant)


def _expected_bpref(s: Sums) -> np.ndarray:
    """bpref over all orders of each tie group: a relevant item of a group with b judged
    non-relevant items has y = 0..b of them above it, equally likely, besides the ``base``
    of earlier groups; sum_y min(base + y, R) is a difference of two closed-form sums."""
    c = s.c
    # a metric that reads judgements gets them in its chunk
    assert c.judged is not None and c.n_nonrelevant is not None
    nonrel = s.group_sum((c.judged & ~s.relevant).astype(np.float64))
    base = s.before_group(nonrel)
    user = c.user[s.group_first]
    r, cap = c.n_relevant[user], np.minimum(c.n_nonrelevant, c.n_relevant)[user]

    def upto(t: np.ndarray) -> np.ndarray:  # sum_{x=0}^{t} min(x, R), for t >= -1
        return np.where(t <= r, t * (t + 1) / 2, r * (r + 1) / 2 + (t - r) * r)

    mean_lost = (upto(base + nonrel) - upto(base - 1)) / (nonrel + 1)
    term = 1.0 - mean_lost / np.where(cap > 0, cap, 1)
    return safe_div(np.bincount(user, s.group_hits * term, minlength=c.n_users),
                     c.n_relevant)


def _iprec(s: Sums, level: float) -> np.ndarray:
    """trec_eval's iprec_at_recall: the interpolated precision at the hit that reaches
    recall ``level``, the n-th hit (the first for n = 0); 0 when the list never reaches it.
    n is (long)(level R + 0.9) in trec_eval 9.0.8 and pytrec_eval (a ceiling that forgives
    float error in level R), lround(level R) in trec_eval 10.0 (``recall_rounding``).
    Undefined where n = 0 and the exclusions emptied the list: the precision of no item."""
    c = s.c
    more = 0.5 if s.conv.recall_rounding == "round" else 0.9  # lround: floor(x + 0.5), x >= 0
    need = np.floor(level * c.n_relevant + more).astype(np.int64)
    found = s.hits(np.inf)
    first = np.searchsorted(s.h_user, np.arange(c.n_users))
    reach = (need <= found) & (found > 0)
    at = first + np.maximum(need, 1) - 1
    out = np.zeros(c.n_users)
    out[reach] = s._hit_suffix_best[at[reach]]
    if c.emptied is not None:  # precision over no item retrieved, 0/0 (registry: undefined)
        out[c.emptied & (need == 0)] = np.nan
    return out


def _iprec_11pt(s: Sums, k: float) -> np.ndarray:
    """trec_eval's 11pt_avg: iprec averaged over the recall levels 0, 0.1, ..., 1, or those
    of the ``levels`` parameter."""
    given = s.params.get("levels")
    levels = numbers(given) if given else (*(i / 10 for i in range(10)), 1.0)
    return np.mean([_iprec(s, level) for level in levels], axis=0)


def _num_nonrel_judged_ret(s: Sums, k: float) -> np.ndarray:
    """Judged non-relevant items of the whole list (trec_eval's num_nonrel_judged_ret)."""
    c = s.c
    assert c.judged is not None  # a metric that reads judgements gets them in its chunk
    return np.bincount(c.user, c.judged & ~s.relevant, minlength=c.n_users).astype(np.float64)


def _r_precision_mult(s: Sums, m: float) -> np.ndarray:
    """trec_eval's Rprec_mult: precision at c = (long)(m R + 0.9) items, 0 when c is 0."""
    c = np.floor(m * s.c.n_relevant + 0.9)
    return safe_div(s.hits_within(c), c)


def _rbp(s: Sums, k: float) -> np.ndarray:
    """(1 - p) sum p^(i - 1) g_i: g is 1 per hit, or (``rbp_gain`` graded, trec_eval 10.0)
    the grade over the user's highest grade when that exceeds 1, or (raw, ranx) the grade of
    each relevant item."""
    p = s.conv.rbp_p
    gains = {"binary": lambda: (s.h_user, s.h_pos, s.h_w), "graded": lambda: s.graded,
             "raw": lambda: s.raw}
    user, pos, w = gains[s.conv.rbp_gain]()
    weights = (1.0 - p) * np.power(p, pos - 1.0)
    if w is not None:
        weights *= w
    return np.bincount(user, weights, minlength=s.c.n_users)


def _rbp_residual(s: Sums, k: float) -> np.ndarray:
    """Moffat and Zobel's residual: the weight of the unjudged items of the list plus the
    weight of everything past its end (``rbp_residual_tail``: trec_eval 10.0 leaves the tail
    out of a list whose items are all judged)."""
    c, p = s.c, s.conv.rbp_p
    unjudged = np.flatnonzero(s.judged_weight < 1)  # most rows of a deep run: in place
    weights = c.pos[unjudged].astype(np.float64)
    weights -= 1.0
    np.power(p, weights, out=weights)
    weights *= 1.0 - p
    missing = s.judged_weight[unjudged]
    np.subtract(1, missing, out=missing)
    weights *= missing
    del missing
    inside = np.bincount(c.user[unjudged], weights, minlength=c.n_users)
    tail = np.power(p, s.list_length)
    if s.conv.rbp_residual_tail == "if-unjudged":  # trec_eval 10.0: 0 for a judged list
        tail = np.where(np.bincount(c.user[unjudged], minlength=c.n_users) > 0, tail, 0.0)
    return inside + tail


def _err(s: Sums, k: float) -> np.ndarray:
    weights = s.err_stop * s.err_decay / s.g_pos
    return s._per_user("err", k, s.g_user, s.g_pos, weights)


def _judged(s: Sums, k: float) -> np.ndarray:
    return safe_div(s.judged(k), np.minimum(s.list_length, k))


def _compat(s: Sums, k: float) -> np.ndarray:
    """Clarke et al.'s compatibility: RBO with persistence p of the list L and the ideal
    ranking I (the relevant items by grade descending, those of one grade in the list's order,
    retrieved first) to the depth D = max(n, R), over I's own RBO (``normalize``), else over
    sum_{d<=D} p^(d-1). RBO's sum_d p^(d-1) |L_d & I_d| / d is, item by item, a sum over the
    depths from max(l_x, i_x) to D: a difference of the prefix sums S of p^(d-1) / d."""
    c = s.c
    p = float(s.params.get("p", 0.95))
    r = c.n_relevant.astype(np.int64)
    depth = np.maximum(s.list_length.astype(np.int64), r)
    d = np.arange(1, (int(depth.max()) if len(depth) else 0) + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        steps = np.power(p, d - 1)
    prefix = np.concatenate(([0.0], np.cumsum(steps / d)))  # S(0), S(1), ..., S(max D)
    user, place = s.h_user, _ideal_place(s)
    low = np.maximum(s.h_pos.astype(np.int64), place)
    score = np.bincount(user, prefix[depth[user]] - prefix[low - 1], minlength=c.n_users)
    if s.params.get("normalize", True):
        # I against itself: its first d items overlap min(d, R), the item at place i from i
        best = r * prefix[depth] - np.concatenate(([0.0], np.cumsum(prefix)))[r]
        return safe_div(score, best)
    weights = np.concatenate(([0.0], np.cumsum(steps)))[depth]
    return safe_div(score, weights)


def _ideal_place(s: Sums) -> np.ndarray:
    """Each hit's place in the ideal ranking: after the user's relevant items of a higher
    grade, and after the hits of its own grade above it in the list."""
    c = s.c
    grades = np.unique(np.concatenate((c.ideal_rel, s.h_rel)))
    n = len(grades)

    def key(user: np.ndarray, rel: np.ndarray) -> np.ndarray:  # (user, grade descending)
        return user.astype(np.int64) * n + (n - 1 - np.searchsorted(grades, rel))

    ideal = key(c.ideal_user, c.ideal_rel)  # ascending: the ideal rows are so sorted
    hits = key(s.h_user, s.h_rel)
    higher = np.searchsorted(ideal, hits) - np.searchsorted(ideal, s.h_user.astype(np.int64) * n)
    order = np.argsort(hits, kind="stable")  # hits of one grade stay in list order
    ranked = hits[order]
    earlier = np.empty(len(hits), dtype=np.int64)
    earlier[order] = np.arange(len(hits)) - np.searchsorted(ranked, ranked)
    return higher + earlier + 1


KERNELS: dict[str, Callable[[Sums, float], np.ndarray]] = {
    "num_nonrel_judged_ret": _num_nonrel_judged_ret, "iprec_11pt": _iprec_11pt,
    "gm_bpref": lambda s, k: np.log(np.maximum(_bpref(s, k), GM_FLOOR)), "bpref": _bpref,
    "iprec": _iprec, "r_precision_mult": _r_precision_mult, "rbp": _rbp,
    "rbp_residual": _rbp_residual, "err": _err, "judged": _judged, "compat": _compat,
}
