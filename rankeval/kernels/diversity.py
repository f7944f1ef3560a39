"""Intent-aware metrics over subtopic judgements, as ndeval (TREC Web track diversity task)
defines them: alpha-nDCG, ERR-IA, NRBP, P-IA, MAP-IA, subtopic recall. Numpy only.

A chunk with subtopics holds the relevant (user, item, subtopic) triples. Each ranked row that
is relevant to a subtopic s earns (1 - alpha)^c, c being the rows above it relevant to s: the
pairs below are those (row, subtopic) matches, computed once per chunk. The ideal ranking is
ndeval's greedy one (the exact one is NP-hard): at each rank the item earning most given those
above, ties to the greater item id (item codes follow the ids' byte order, as ndeval's strcmp);
it is built rank by rank for every user at once.
"""

from __future__ import annotations

import numpy as np

from rankeval.kernels.sums import Sums, safe_div

ALPHA, BETA = 0.5, 0.5  # ndeval's defaults


def _alpha(s: Sums) -> float:
    return float(s.params.get("alpha", ALPHA))


def _pairs(s: Sums) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (row, subtopic) matches of the ranked rows: user, pos, flat subtopic, and how many
    rows above it in its list are relevant to the same subtopic."""
    cached = s.memo.get("diversity_pairs")
    if cached is not None:
        return cached
    c = s.c
    assert c.aspect_user is not None and c.aspect_item is not None and c.aspect_sub is not None
    n_items = _n_items(c)
    run = c.user.astype(np.int64) * n_items + c.item
    judged = c.aspect_user.astype(np.int64) * n_items + c.aspect_item
    lo = np.searchsorted(judged, run, "left")
    count = np.searchsorted(judged, run, "right") - lo
    row = np.repeat(np.arange(len(run)), count)
    first = np.cumsum(count) - count
    at = np.arange(len(row)) + np.repeat(lo - first, count)
    user, pos, sub = c.user[row], c.pos[row], c.aspect_sub[at]
    # rows are in (user, pos) order already: a stable sort by subtopic keeps pos ascending
    order = np.argsort(sub, kind="stable")
    starts = _starts(sub[order])
    sizes = np.diff(np.r_[starts, len(sub)])
    prior = np.empty(len(sub), dtype=np.int64)
    prior[order] = np.arange(len(sub)) - np.repeat(starts, sizes)
    out = (user, pos.astype(np.float64), sub, prior)
    s.memo["diversity_pairs"] = out
    return out


def _n_items(c) -> np.int64:
    """A bound on the item codes of the chunk's rows and subtopic triples."""
    top = max(int(c.item.max()) if len(c.item) else 0,
              int(c.aspect_item.max()) if len(c.aspect_item) else 0)
    return np.int64(top + 1)


def _starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins."""
    if not len(sorted_keys):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])


def _earned(s: Sums) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per match: user, pos, and (1 - alpha)^c."""
    user, pos, _, prior = _pairs(s)
    return user, pos, np.power(1.0 - _alpha(s), prior)


def _ideal(s: Sums, depth: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ndeval's greedy ideal ranking to ``depth`` ranks (inf: every relevant item): per rank,
    user, pos and the gain the item earns there."""
    key = ("diversity_ideal", _alpha(s))
    cached = s.memo.get(key)
    if cached is not None and cached[0] >= depth:
        return cached[1]
    c = s.c
    assert c.aspect_user is not None and c.aspect_item is not None and c.aspect_sub is not None
    assert c.aspect_size is not None
    decay = 1.0 - _alpha(s)
    n_items = _n_items(c)
    key_rows = c.aspect_user.astype(np.int64) * n_items + c.aspect_item
    doc_first = _starts(key_rows)  # the matches of one item are adjacent
    n_docs = len(doc_first)
    doc = np.repeat(np.arange(n_docs), np.diff(np.r_[doc_first, len(key_rows)]))
    doc_user = c.aspect_user[doc_first]
    doc_rank = c.aspect_item[doc_first]
    gains = np.ones(len(c.aspect_size))
    alive = np.ones(n_docs, dtype=bool)
    rows = np.arange(len(doc))  # the matches of the items not yet placed
    us, ps, gs = [], [], []
    rank = 0
    while len(rows) and rank < depth:
        rank += 1
        score = np.bincount(doc[rows], gains[c.aspect_sub[rows]], minlength=n_docs)
        cand = np.flatnonzero(alive)
        order = np.lexsort((doc_rank[cand], score[cand], doc_user[cand]))
        users = doc_user[cand][order]
        last = np.flatnonzero(np.r_[users[1:] != users[:-1], True])
        picked = cand[order[last]]  # per user: the highest score, then the greatest item id
        us.append(doc_user[picked])
        ps.append(np.full(len(picked), rank, dtype=np.float64))
        gs.append(score[picked])
        alive[picked] = False
        placed = ~alive[doc[rows]]
        gains[c.aspect_sub[rows[placed]]] *= decay
        rows = rows[~placed]
    out = ((np.concatenate(us), np.concatenate(ps), np.concatenate(gs)) if us
           else (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)))
    s.memo[key] = (depth if len(rows) else np.inf, out)
    return out


def _per_user(s: Sums, user: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.bincount(user, weights, minlength=s.c.n_users)


def _depth(s: Sums, k: float) -> np.ndarray:
    """Each user's cut: K, or the list's length for the whole list."""
    return s.list_length if k == np.inf else np.full(s.c.n_users, float(k))


def _ideal_ideal(s: Sums, k: float, discount) -> np.ndarray:
    """ndeval's collection-independent normalizer: M subtopics all covered at every rank,
    M sum_{r<=K} (1 - alpha)^(r-1) discount(r)."""
    assert s.c.n_aspects is not None
    depth = _depth(s, k)
    top = int(depth.max()) if len(depth) else 0
    r = np.arange(1, top + 1, dtype=np.float64)
    running = np.r_[0.0, np.cumsum(np.power(1.0 - _alpha(s), r - 1) * discount(r))]
    return s.c.n_aspects * running[depth.astype(np.int64)]


def _log_discount(pos: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(pos + 1.0)


def _reciprocal(pos: np.ndarray) -> np.ndarray:
    return 1.0 / pos


def _raw(s: Sums, k: float, discount) -> np.ndarray:
    user, pos, earned = _earned(s)
    keep = pos <= k  # K = inf: the whole list
    return _per_user(s, user[keep], earned[keep] * discount(pos[keep]))


def _raw_ideal(s: Sums, k: float, discount) -> np.ndarray:
    user, pos, earned = _ideal(s, k)  # @all: the whole ideal list, every relevant item
    keep = pos <= k
    return _per_user(s, user[keep], earned[keep] * discount(pos[keep]))


def _alpha_dcg(s: Sums, k: float) -> np.ndarray:
    return safe_div(_raw(s, k, _log_discount), _ideal_ideal(s, k, _log_discount))


def _alpha_ndcg(s: Sums, k: float) -> np.ndarray:
    return safe_div(_raw(s, k, _log_discount), _raw_ideal(s, k, _log_discount))


def _err_ia(s: Sums, k: float) -> np.ndarray:
    return safe_div(_raw(s, k, _reciprocal), _ideal_ideal(s, k, _reciprocal))


def _nerr_ia(s: Sums, k: float) -> np.ndarray:
    return safe_div(_raw(s, k, _reciprocal), _raw_ideal(s, k, _reciprocal))


def _nrbp_sum(s: Sums, user: np.ndarray, pos: np.ndarray, earned: np.ndarray) -> np.ndarray:
    beta = float(s.params.get("beta", BETA))
    return _per_user(s, user, earned * np.power(beta, pos - 1.0))


def _nrbp(s: Sums, k: float) -> np.ndarray:
    """(1 - (1 - alpha) beta) / M sum_j beta^(j-1) sum_s rel_js (1 - alpha)^c_js."""
    assert s.c.n_aspects is not None
    beta = float(s.params.get("beta", BETA))
    scale = (1.0 - (1.0 - _alpha(s)) * beta)
    return safe_div(scale * _nrbp_sum(s, *_earned(s)), s.c.n_aspects.astype(np.float64))


def _nnrbp(s: Sums, k: float) -> np.ndarray:
    return safe_div(_nrbp_sum(s, *_earned(s)), _nrbp_sum(s, *_ideal(s, np.inf)))


def _p_ia(s: Sums, k: float) -> np.ndarray:
    """Matches in the top K over K M (over n M for the whole list of n items)."""
    assert s.c.n_aspects is not None
    user, pos, _, _ = _pairs(s)
    found = np.bincount(user[pos <= k], minlength=s.c.n_users)
    return safe_div(found.astype(np.float64), _depth(s, k) * s.c.n_aspects)


def _map_ia(s: Sums, k: float) -> np.ndarray:
    """1/M sum_s AP_s, AP_s over the whole list and the subtopic's relevant items."""
    assert s.c.n_aspects is not None and s.c.aspect_size is not None
    user, pos, sub, prior = _pairs(s)
    share = (prior + 1.0) / pos / s.c.aspect_size[sub]
    return safe_div(_per_user(s, user, share), s.c.n_aspects.astype(np.float64))


def _subtopic_recall(s: Sums, k: float) -> np.ndarray:
    """Subtopics with a relevant item in the top K over M."""
    assert s.c.n_aspects is not None
    user, pos, _, prior = _pairs(s)
    first = (prior == 0) & (pos <= k)
    return safe_div(np.bincount(user[first], minlength=s.c.n_users).astype(np.float64),
                     s.c.n_aspects.astype(np.float64))


KERNELS = {"alpha_ndcg": _alpha_ndcg, "alpha_dcg": _alpha_dcg, "err_ia": _err_ia,
           "nerr_ia": _nerr_ia, "nrbp": _nrbp, "nnrbp": _nnrbp, "p_ia": _p_ia,
           "map_ia": _map_ia, "subtopic_recall": _subtopic_recall}
