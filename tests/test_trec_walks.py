"""trec_eval's walk-down-the-list measures (binG, G, ndcg_rel, Rndcg, infAP, unj, utility,
rbp_resid, yaap) against a direct walk over each list, written here from trec_eval's definitions:
one list at a time, position by position, as trec_eval computes them. rankeval's kernels
compute the same values with running sums over all users at once; they must agree to 1e-12
on generated qrels with grades 0-3, documents outside the pool, pooled but unjudged documents
(relevance -1), empty lists and queries with nothing relevant. (trec_eval's own printed
figures, to 4 decimals, are test_trec_eval_versions.)
"""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

import rankeval

NONPOOL, UNJUDGED = None, -1


def _lists(seed: int):
    rng = random.Random(seed)
    truth, preds = [], []
    for q in range(40):
        qid = f"q{q:02d}"
        docs = [f"d{d:03d}" for d in rng.sample(range(300), 60)]
        grades = {}
        for d in docs[: rng.randint(0, 40)]:
            grades[d] = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3])
            truth.append((qid, d, grades[d]))
        if not grades:  # every query is in the truth
            truth.append((qid, "none", 0))
        ranked = rng.sample(docs, rng.randint(0, 45))
        for rank, d in enumerate(ranked, 1):
            preds.append((qid, d, 1000.0 - rank))
    return (pd.DataFrame(preds, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


def _walk(preds: pd.DataFrame, truth: pd.DataFrame, level: int, p: float):
    """Per query, each measure by a walk down its list."""
    grades = {q: dict(zip(g.item_id, g.relevance, strict=True))
              for q, g in truth.groupby("user_id")}
    out = {}
    for q, qrels in grades.items():
        ranked = preds[preds.user_id == q].sort_values("score", ascending=False).item_id
        rels = [qrels.get(d, NONPOOL) for d in ranked]
        out[q] = _one(rels, qrels, level, p)
    return out


def _one(rels, qrels, level, p):
    gain = [r if r is not None and r > 0 else 0 for r in rels]
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)
    num_rel = sum(1 for g in qrels.values() if g >= level)
    n = len(rels)
    relevant = [r is not None and r >= level for r in rels]
    found = sum(relevant)
    v = {}
    # binG: a relevant item at index i with `so_far` relevant items up to it
    s, so_far = 0.0, 0
    for i, hit in enumerate(relevant):
        if hit:
            so_far += 1
            s += 1 / math.log2(2 + i - (so_far - 1))
    v["bin_g"] = s / num_rel if num_rel else 0.0
    # G: cost grows by max(ideal gain, 1) a place, gained by the list's gain
    g_sum, cost, gained = 0.0, 0.0, 0.0
    for i, g in enumerate(gain):
        cost += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        gained += g
        if g:
            g_sum += g / math.log2(2 + cost - gained)
    v["g"] = g_sum / sum(ideal) if ideal else 0.0

    def dcg(values, depth):
        return sum(x / math.log2(j + 2) for j, x in enumerate(values[:depth]))

    # ndcg_rel: NDCG at each item with a gain; the ideal items never found count the end
    total = 0.0
    for i, g in enumerate(gain):
        if g > 0:
            total += dcg(gain, i + 1) / dcg(ideal, i + 1)
    missing = len(ideal) - sum(1 for g in gain if g > 0)
    if ideal:
        total += missing * dcg(gain, n) / dcg(ideal, len(ideal))
    v["ndcg_rel"] = total / len(ideal) if total > 0 else 0.0
    # Rndcg: NDCG at each depth where the ideal grade changes, and at the list's end when
    # the list runs more than one item past the ideal items with a gain
    points = [d for d in range(1, len(ideal) + 1)
              if d == len(ideal) or ideal[d] != ideal[d - 1]]
    ndcgs = [dcg(gain, d) / dcg(ideal, d) for d in points]
    if ideal and n > len(ideal) + 1:
        ndcgs.append(dcg(gain, n) / dcg(ideal, len(ideal)))
    v["r_ndcg"] = sum(ndcgs) / len(ndcgs) if num_rel and ndcgs else 0.0
    # infAP
    ap, rel_so_far, nonrel, pooled = 0.0, 0, 0, 0
    for j, r in enumerate(rels):
        if r is None:
            continue
        if r < 0:
            pooled += 1
        elif r < level:
            nonrel += 1
        else:
            rel_so_far += 1
            if j == 0:
                ap += 1.0
            else:
                eps = 0.00001
                ap += 1 / (j + 1) + (j / (j + 1)) * ((rel_so_far - 1 + nonrel + pooled) / j) * (
                    (rel_so_far - 1 + eps) / (rel_so_far - 1 + nonrel + 2 * eps))
    v["inf_ap"] = ap / num_rel if num_rel else 0.0
    unjudged = [r is None or r < 0 for r in rels]
    for k in (5, 10, 20):
        v[f"unjudged@{k}"] = sum(unjudged[:k]) / k
    v["utility"] = found - (n - found)
    mass, so_far = 0.0, 0
    for i, hit in enumerate(relevant):
        if hit:
            so_far += 1
            mass += so_far / (i + 1)
    v["yaap"] = math.log((1 + mass) / (1 + num_rel - mass))
    inside = sum((1 - p) * p**i for i, u in enumerate(unjudged) if u)
    v["rbp_residual"] = inside + p**n if any(unjudged) else 0.0
    return v


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("level", [1, 2])
def test_kernels_equal_a_walk_down_each_list(seed, level):
    preds, truth = _lists(seed)
    names = ["bin_g", "g", "ndcg_rel", "r_ndcg", "inf_ap", "unjudged@5", "unjudged@10",
             "unjudged@20", "utility", "rbp_residual", "yaap"]
    ev = rankeval.evaluate(preds, truth, names, compat="trec_eval", relevance_threshold=level,
                           skip_missing_users=False)
    expected = _walk(preds, truth, level, 0.9)
    users = [str(u) for u in ev.user_ids]
    assert sorted(users) == sorted(expected)  # every query, with or without a list
    for name in names:
        ours = ev.values(name)
        theirs = np.array([expected[u][name] for u in users])
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=name)
        assert ev.metrics[name] == pytest.approx(theirs.mean(), rel=1e-12, abs=1e-12)
