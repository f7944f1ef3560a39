"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``; ``preferences``): the
14 ``prefs_*`` values of each query from its ranked list and its judgment groups'
preferences, as trec_eval 9.0.8 and 10.0 count them (their form_prefs_counts and
m_prefs_*, read, not copied).

A judgment group (a judge) gives each of its documents a level in one or more subgroups; within
a subgroup a document is preferred to every one at a lower level. A group of one subgroup
prefers its documents by level (equivalence classes, counted with their repeats); a group of
several is a partial order closed under transitivity. Each preference (A over B) is fulfilled
when A is ranked above B, and counted as retrieved (both ranked), implied (one ranked) or
neither. The documents of a query are numbered in the list's order, the ranked judged ones
first (0 .. ranked - 1, by score descending, then document id ascending as bytes), then the
unranked judged ones by id. Everything here works on those numbers.

Computed over flat arrays: the numbering, the per-query sums and the document pairs' counts
(sorted keys, ``bincount``), and the groups of one subgroup (every group of qrels read as
preferences) all at once, their rows paired in chunks of at most ``PAIRS_AT_ONCE`` pairs. A
group of several subgroups is a step of its own: its partial order is closed by boolean
matrix products over its documents.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The measures, in trec_eval's order (its measures.c); the counts are summed over queries
# (printed as integers), the others are means over queries.
MEASURES = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
            "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
            "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
            "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")
COUNTS = frozenset(MEASURES[:3])


class Inconsistent(ValueError):
    """Preferences trec_eval stops on: ``row`` is the (0-based) preference row named."""

    def __init__(self, row: int, why: str) -> None:
        super().__init__(why)
        self.row, self.why = row, why


@dataclass(frozen=True)
class Ranked:
    """The run as document numbers: each query's judged documents numbered in list order
    (``numbers``, by preference row), how many of them the list ranks, and how many in all."""

    numbers: np.ndarray  # per preference row: its document's number in its query
    ranked: np.ndarray  # per query: judged documents the list ranks (trec_eval's num_judged_ret)
    judged: np.ndarray  # per query: judged documents


def number(run_query: np.ndarray, run_doc: np.ndarray, run_score: np.ndarray,
           pref_query: np.ndarray, pref_doc: np.ndarray, n_queries: int, n_docs: int,
           depth: int | None) -> Ranked:
    """Number each query's judged documents. ``*_doc`` are codes in the ids' byte order and
    ``*_query`` query codes; the run's lists are cut at ``depth`` after ordering by score
    (descending) then id (ascending). The run must hold no document twice within the depth."""
    order = np.lexsort((run_doc, -run_score, run_query))
    q, d = run_query[order], run_doc[order]
    start = np.searchsorted(q, np.arange(n_queries))
    position = np.arange(len(q)) - start[q]
    if depth is not None:
        keep = position < depth
        q, d = q[keep], d[keep]
    key = q.astype(np.int64) * n_docs + d
    judged_keys = np.unique(pref_query.astype(np.int64) * n_docs + pref_doc)
    hit = np.isin(key, judged_keys)
    ranked_keys, ranked_q = key[hit], q[hit]  # in list order within each query
    ranked = np.bincount(ranked_q, minlength=n_queries)
    rank_of_ranked = np.arange(len(ranked_keys)) - np.concatenate(
        ([0], np.cumsum(ranked)[:-1]))[ranked_q]
    rest = judged_keys[~np.isin(judged_keys, ranked_keys)]  # by query, then id's bytes
    rest_q = rest // n_docs
    rest_count = np.bincount(rest_q, minlength=n_queries)
    rank_of_rest = (np.arange(len(rest)) - np.concatenate(([0], np.cumsum(rest_count)[:-1]))[
        rest_q] + ranked[rest_q])
    keys = np.concatenate([ranked_keys, rest])
    ranks = np.concatenate([rank_of_ranked, rank_of_rest])
    by_key = np.argsort(keys, kind="stable")
    at = np.searchsorted(keys[by_key], pref_query.astype(np.int64) * n_docs + pref_doc)
    return Ranked(numbers=ranks[by_key][at], ranked=ranked,
                  judged=np.bincount(judged_keys // n_docs, minlength=n_queries))


def repeated_in_lists(run_query: np.ndarray, run_doc: np.ndarray, run_score: np.ndarray,
                      n_docs: int, depth: int | None) -> np.ndarray:
    """The run's rows (indices) that repeat a document of their query within ``depth``."""
    order = np.lexsort((run_doc, -run_score, run_query))
    q = run_query[order]
    start = np.searchsorted(q, q)
    keep = order[np.arange(len(q)) - start < depth] if depth is not None else order
    key = run_query[keep].astype(np.int64) * n_docs + run_doc[keep]
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    seen = np.zeros(len(key), dtype=bool)
    seen[first] = True
    return np.sort(keep[~seen]) if (counts > 1).any() else np.empty(0, dtype=np.int64)


# per judgment group: the counts its measures read
_FIELDS = ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "rel", "rel_ret",
           "nonrel", "nonrel_ret", "rn_ful", "rn_poss", "rnr_ful", "rnr_poss")


def measures(query: np.ndarray, group: np.ndarray, subgroup: np.ndarray, level: np.ndarray,
             ranked: Ranked, n_queries: int) -> dict[str, np.ndarray]:
    """Each query's 14 values (``MEASURES``) from its preference rows: ``query``, ``group``
    and ``subgroup`` as codes in their ids' byte order, ``level`` as read. An
    ``Inconsistent`` for what trec_eval stops on."""
    r = ranked.numbers
    # trec_eval's order: group, subgroup, level descending, document number
    order = np.lexsort((r, -level, subgroup, group, query))
    q, g, s, lv, r, rows = query[order], group[order], subgroup[order], level[order], \
        r[order], order
    bounds = np.flatnonzero(np.r_[True, (q[1:] != q[:-1]) | (g[1:] != g[:-1]), True])
    n_groups = len(bounds) - 1
    starts, ends = bounds[:-1], bounds[1:]
    group_query = q[starts]
    gid = np.repeat(np.arange(n_groups), ends - starts)
    # the pair measures need a query's pairs of documents when several groups (or a
    # document's repeated rows) may prefer one pair more than once; else they are the simple
    # shares, computed from the counts (each pair preferred once: its share is 0 or 1)
    by_doc = np.lexsort((r, gid))
    repeats = np.zeros(n_groups, dtype=bool)
    same = (gid[by_doc][1:] == gid[by_doc][:-1]) & (r[by_doc][1:] == r[by_doc][:-1])
    repeats[gid[by_doc][1:][same]] = True
    several = np.bincount(group_query, minlength=n_queries) > 1
    several[group_query[repeats]] = True
    alone = ~several
    wanted = several[group_query]  # per group: its pairs are kept
    njr = ranked.ranked[group_query]
    counts = np.zeros((n_groups, len(_FIELDS)), dtype=np.int64)
    single = s[starts] == s[ends - 1]  # one subgroup: classes by level
    pairs = [(np.empty(0, dtype=np.int64),) * 3]
    for chunk in _chunks(np.flatnonzero(single), ends - starts):
        counts[chunk], kept = _classes(chunk, starts, ends, lv, r, rows, njr, wanted,
                                       group_query)
        pairs.append(kept)
    for i in np.flatnonzero(~single):  # several subgroups: one partial order per group
        lo, hi = starts[i], ends[i]
        a, b, counts[i] = _partial(s[lo:hi], lv[lo:hi], r[lo:hi], rows[lo:hi], int(njr[i]))
        if wanted[i]:
            pairs.append((np.full(len(a), group_query[i]), a, b))
    c = {f: counts[:, j] for j, f in enumerate(_FIELDS)}
    pq, pa, pb = (np.concatenate([p[k] for p in pairs]).astype(np.int64) for k in range(3))
    return _values(c, group_query, n_queries, pq, pa, pb, ranked, alone)


# the most row pairs built at once (the groups of one subgroup are paired in chunks)
PAIRS_AT_ONCE = 1 << 20


def _chunks(groups: np.ndarray, sizes: np.ndarray):
    """``groups`` in consecutive runs of at most ``PAIRS_AT_ONCE`` row pairs (a larger group
    alone)."""
    load = np.cumsum(sizes[groups].astype(np.int64) ** 2)
    begin = 0
    while begin < len(groups):
        base = load[begin - 1] if begin else 0
        end = max(int(np.searchsorted(load, base + PAIRS_AT_ONCE, side="right")), begin + 1)
        yield groups[begin:end]
        begin = end


def _classify(a: np.ndarray, b: np.ndarray, njr: int) -> list[int]:
    """Preferences a over b (document numbers): fulfilled and possible, retrieved (both
    ranked), implied (one) and neither."""
    ful_ret = int(((a < b) & (b < njr)).sum())
    ful_imp = int(((a < b) & (a < njr) & (b >= njr)).sum())
    notoccur = int(((a >= njr) & (b >= njr)).sum())
    poss_ret = int(((a > b) & (a < njr)).sum()) + ful_ret
    poss_imp = int(((a > b) & (a >= njr) & (b < njr)).sum()) + ful_imp
    return [ful_ret, poss_ret, ful_imp, poss_imp, notoccur]


def _tally(a: np.ndarray, b: np.ndarray, njr: int) -> tuple[int, int]:
    """trec_eval's recount for the Rnonrel measures: fulfilled when a is ranked above b."""
    ful = int(((a < b) & (a < njr)).sum())
    return ful, len(a)


def _classes(chunk: np.ndarray, starts: np.ndarray, ends: np.ndarray, lv: np.ndarray,
             r: np.ndarray, rows: np.ndarray, njr_of: np.ndarray, wanted: np.ndarray,
             group_query: np.ndarray):
    """Groups of one subgroup, together: every row over every row of its group at a lower
    level (repeats counted; rows sorted by level descending, then number). Their counts, and
    the preferences of the groups ``wanted`` (query, a, b)."""
    k = len(chunk)
    size = ends[chunk] - starts[chunk]
    local = np.repeat(np.arange(k), size)  # each row's group in the chunk
    first = np.concatenate(([0], np.cumsum(size)[:-1]))
    row = starts[chunk][local] + np.arange(len(local)) - first[local]
    # every ordered pair of rows within a group
    pg = np.repeat(local, size[local])
    ai = np.repeat(row, size[local])
    step = np.concatenate(([0], np.cumsum(size[local])[:-1]))
    bi = starts[chunk][pg] + np.arange(len(ai)) - np.repeat(step, size[local])
    njr = njr_of[chunk]
    lev, num = lv[row], r[row]  # by row of the chunk
    at = np.empty(int(ends[chunk].max(initial=0)) if k else 0, dtype=np.int64)
    at[row] = np.arange(len(row))  # a row's place in the chunk
    pa_, pb_ = at[ai], at[bi]
    better = lev[pa_] > lev[pb_]
    clash = better & (num[pa_] == num[pb_])
    if clash.any():
        raise Inconsistent(int(rows[bi[np.flatnonzero(clash)[0]]]),
                           "a document with two levels in one subgroup")

    def per(mask: np.ndarray, of: np.ndarray = pg) -> np.ndarray:
        return np.bincount(of[mask], minlength=k).astype(np.int64)

    a, b, n = num[pa_], num[pb_], njr[pg]
    ful_ret = per(better & (a < b) & (b < n))
    ful_imp = per(better & (a < b) & (a < n) & (b >= n))
    notoccur = per(better & (a >= n) & (b >= n))
    poss_ret = per(better & (a > b) & (a < n)) + ful_ret
    poss_imp = per(better & (a > b) & (a >= n) & (b < n)) + ful_imp
    ret = num < njr[local]
    rel = lev > 0
    count = [per(rel & ret, local), per(rel, local)]
    rel_ret, rel_n = count
    nonrel, nonrel_ret = per(~rel, local), per(~rel & ret, local)
    # the last class (the lowest level: 0 where there are non-relevant rows) and each row's
    # place in it; its first R rows (or R ranked ones) stand for the non-relevant
    lowest = np.minimum.reduceat(lev, first) if k else lev
    last = lev == lowest[local]
    last_start = np.full(k, len(row))
    np.minimum.at(last_start, local[last], np.flatnonzero(last))
    place = np.arange(len(row)) - last_start[local]
    new = last & (place < rel_n[local])
    new_ret = last & ret & (place < rel_ret[local])
    inner = better & ~last[pa_] & ~last[pb_]
    early = a < b
    rn_ful = per(inner & early & (a < n)) + per(new[pb_] & early & (a < n))
    rn_all = per(inner) + per(new[pb_])
    both = (a < n) & (b < n)
    rnr_ful = per(inner & both & early) + per(ret[pa_] & new_ret[pb_] & early)
    rnr_all = per(inner & both) + per(ret[pa_] & new_ret[pb_])
    R, N, Rr, Nr = rel_n, nonrel, rel_ret, nonrel_ret
    rn = (np.where(R >= N, ful_ret + ful_imp + Rr * (R - N), rn_ful),
          np.where(R >= N, poss_ret + poss_imp + notoccur + R * (R - N), rn_all))
    rnr = (np.where(Rr >= Nr, ful_ret + Rr * (Rr - Nr), rnr_ful),
           np.where(Rr >= Nr, poss_ret + R * (Rr - Nr), rnr_all))
    counts = np.stack([ful_ret, poss_ret, ful_imp, poss_imp, notoccur, R, Rr, N, Nr, *rn,
                       *rnr], axis=1)
    keep = better & wanted[chunk][pg]
    return counts, (group_query[chunk][pg[keep]], a[keep], b[keep])


def _partial(sub: np.ndarray, lv: np.ndarray, r: np.ndarray, rows: np.ndarray, njr: int):
    """A group of several subgroups: preferences within each subgroup by level, closed
    under transitivity (one document set per group, each document's class its last row's)."""
    docs, at = np.unique(r, return_inverse=True)
    n = len(docs)
    positive, zero = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    np.logical_or.at(positive, at, lv > 0)
    np.logical_or.at(zero, at, lv == 0)
    both = positive & zero
    if both.any():
        first = np.flatnonzero(both[at])[-1]
        raise Inconsistent(int(rows[first]), "a document both non-relevant (level 0) and "
                           "relevant in one judgment group")
    last_row = np.zeros(n, dtype=np.int64)
    np.maximum.at(last_row, at, np.arange(len(r)))
    level = lv[last_row]
    direct = (sub[:, None] == sub[None, :]) & (lv[:, None] > lv[None, :])
    closed = np.eye(n, dtype=bool)
    ai, bi = np.nonzero(direct)
    closed[at[ai], at[bi]] = True
    while True:  # the transitive closure: square until nothing changes
        step = (closed.astype(np.int32) @ closed.astype(np.int32)) > 0
        if (step == closed).all():
            break
        closed = step
    np.fill_diagonal(closed, False)
    conflict = closed & closed.T
    if conflict.any():
        i, _ = np.argwhere(conflict)[0]
        raise Inconsistent(int(rows[np.flatnonzero(at == i)[0]]),
                           "preferences of one judgment group that contradict each other "
                           "(A over B and B over A, through its subgroups)")
    ii, jj = np.nonzero(closed)
    a, b = docs[ii], docs[jj]
    rel, nonrel, ret = level > 0, level == 0, docs < njr
    counts = [*_classify(a, b, njr), int(rel.sum()), int((rel & ret).sum()),
              int(nonrel.sum()), int((nonrel & ret).sum())]
    R, N, R_ret, N_ret = counts[5], counts[7], counts[6], counts[8]
    if R >= N:
        rn = (counts[0] + counts[2] + R_ret * (R - N),
              counts[1] + counts[3] + counts[4] + R * (R - N))
    else:  # non-relevant documents after the (R + 1)th are left out
        cut = docs[np.flatnonzero(nonrel)[R]]
        kept = ~((docs >= cut) & nonrel)
        k = kept[ii] & kept[jj]
        rn = _tally(a[k], b[k], njr)
    if R_ret >= N_ret:
        rnr = (counts[0] + R_ret * (R_ret - N_ret), counts[1] + R * (R_ret - N_ret))
    else:
        ranked_nonrel = np.flatnonzero(nonrel & ret)
        cut = docs[ranked_nonrel[R]] if len(ranked_nonrel) > R else njr
        kept = ~((docs >= cut) & nonrel)
        k = kept[ii] & kept[jj] & (a < njr) & (b < njr)
        rnr = _tally(a[k], b[k], njr)
    return a, b, [*counts, *rn, *rnr]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den as C divides doubles: 0/0 is NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return num.astype(np.float64) / den.astype(np.float64)


def _values(c: dict[str, np.ndarray], gq: np.ndarray, n: int, pq: np.ndarray, pa: np.ndarray,
            pb: np.ndarray, ranked: Ranked, alone: np.ndarray) -> dict[str, np.ndarray]:
    def total(x: np.ndarray) -> np.ndarray:
        return np.bincount(gq, weights=x, minlength=n)

    def share(ful: np.ndarray, poss: np.ndarray) -> np.ndarray:
        f, p = total(ful), total(poss)
        return np.where(p > 0, _ratio(f, np.maximum(p, 1)), 0.0)

    def averaged(ratio: np.ndarray) -> np.ndarray:
        # the groups' ratios added in group order (a 0/0 makes the sum NaN), kept when > 0
        s = np.bincount(gq, weights=ratio, minlength=n)
        with np.errstate(invalid="ignore"):
            return np.where(s > 0, s / np.maximum(np.bincount(gq, minlength=n), 1), 0.0)

    def skipped(ful: np.ndarray, poss: np.ndarray) -> np.ndarray:
        return np.where(poss > 0, _ratio(ful, np.maximum(poss, 1)), 0.0)

    ful = c["ful_ret"] + c["ful_imp"]
    poss = c["poss_ret"] + c["poss_imp"] + c["notoccur"]
    imp = c["poss_ret"] + c["poss_imp"]
    out = {
        "prefs_num_prefs_poss": total(poss),
        "prefs_num_prefs_ful": total(ful),
        "prefs_num_prefs_ful_ret": total(c["ful_ret"]),
        "prefs_simp": share(ful, poss),
        "prefs_avgjg": averaged(skipped(ful, poss)),
        "prefs_avgjg_Rnonrel": averaged(_ratio(c["rn_ful"], c["rn_poss"])),
        "prefs_simp_ret": share(c["ful_ret"], c["poss_ret"]),
        "prefs_avgjg_ret": averaged(skipped(c["ful_ret"], c["poss_ret"])),
        "prefs_avgjg_Rnonrel_ret": averaged(_ratio(c["rnr_ful"], c["rnr_poss"])),
        "prefs_simp_imp": share(ful, imp),
        "prefs_avgjg_imp": averaged(skipped(ful, imp)),
    }
    pairs = _pairs(pq, pa, pb, ranked, n)
    simple = {"prefs_pair": out["prefs_simp"], "prefs_pair_ret": out["prefs_simp_ret"],
              "prefs_pair_imp": out["prefs_simp_imp"]}
    out.update({m: np.where(alone, simple[m], v) for m, v in pairs.items()})
    return {m: out[m] for m in MEASURES}


def _pairs(pq: np.ndarray, pa: np.ndarray, pb: np.ndarray, ranked: Ranked,
           n: int) -> dict[str, np.ndarray]:
    """The pair measures: each pair of documents preferred either way by any group scores
    the share of its preferences that its order fulfils, in trec_eval's order (pairs of two
    ranked documents, then of one; then the pairs of none, counted only)."""
    njr = ranked.ranked[pq]
    lo, hi = np.minimum(pa, pb), np.maximum(pa, pb)
    kind = (hi >= njr).astype(np.int64) + (lo >= njr)  # 0: both ranked, 1: one, 2: none
    width = int(ranked.judged.max(initial=0)) + 1
    key = ((pq * 3 + kind) * width + lo) * width + hi
    keys, inverse = np.unique(key, return_inverse=True)
    fulfilled = np.bincount(inverse, weights=(pa < pb), minlength=len(keys))
    every = np.bincount(inverse, minlength=len(keys))
    share = fulfilled / np.maximum(every, 1)
    kq, kk = keys // (3 * width * width), keys // (width * width) % 3

    def mean(kinds: tuple[int, ...], counted: tuple[int, ...]) -> np.ndarray:
        take = np.isin(kk, kinds)
        s = np.bincount(kq[take], weights=share[take], minlength=n)
        m = np.bincount(kq[np.isin(kk, counted)], minlength=n)
        return np.where(m > 0, s / np.maximum(m, 1), 0.0)

    return {"prefs_pair": mean((0, 1), (0, 1, 2)), "prefs_pair_ret": mean((0,), (0,)),
            "prefs_pair_imp": mean((0, 1), (0, 1))}
