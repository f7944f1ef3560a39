"""Propensity-weighted metrics for missing-not-at-random feedback (#31): equal weights give
the plain metrics, Yang et al.'s and Steck's worked numbers, the definitions computed with
loops, and unbiasedness on simulated observations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.errors import OptionError


def _train(popularity: dict[str, int]) -> pd.DataFrame:
    """Training interactions giving each item that many distinct users."""
    rows = [(f"t{item}{j}", item) for item, n in popularity.items() for j in range(n)]
    return pd.DataFrame(rows, columns=["user_id", "item_id"])


def test_yang_worked_example():
    """Training popularity A=4, B=2, C=1; the user's relevant items A, B, C; ranking
    C X A Y B. gamma=1: weights 1, 2, 4 (popularity / the largest, to the power -1)."""
    train = _train({"A": 4, "B": 2, "C": 1, "X": 3, "Y": 3})
    truth = pd.DataFrame({"user_id": "u", "item_id": list("ABC"), "relevance": 1})
    run = pd.DataFrame({"user_id": "u", "item_id": list("CXAYB"), "rank": [1, 2, 3, 4, 5]})
    ev = rankeval.evaluate(run, truth, metrics="ips_recall(gamma=1)@3,ips_dcg(gamma=1)@3,"
                           "ips_dcg(gamma=1),ips_recall(gamma=2)@3", train=train)
    got = list(ev.metrics.values())
    # Yang et al.'s DCG is per relevant item: ips_dcg (self-normalised, DCG's scale) / |R|
    full = (4 / math.log2(2) + 1 / math.log2(4) + 2 / math.log2(6)) / 7  # Yang: 0.753387
    assert got == pytest.approx([5 / 7, 3 * 4.5 / 7, 3 * full, 0.760879], abs=1e-6)


def test_steck_weights_per_user():
    """u1: A (popularity 4) and C (1), only A in the top 2; u2: B (2), found. beta 0.5:
    weights 0.5, 0.70711, 1; the mean over users of each one's weighted recall."""
    train = _train({"A": 4, "B": 2, "C": 1, "Z": 1})
    truth = pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["A", "C", "B"],
                          "relevance": 1})
    run = pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["A", "Z", "B"],
                        "rank": [1, 2, 1]})
    ev = rankeval.evaluate(run, truth, metrics="pop_recall@2", train=train)
    assert ev.metrics["pop_recall@2"] == pytest.approx(((0.5 / 1.5) + 1) / 2, abs=1e-12)


def _generated(seed: int):
    rng = np.random.default_rng(seed)
    items = [f"i{j}" for j in range(40)]
    popularity = {item: int(rng.integers(1, 30)) for item in items[:36]}  # 4 unseen
    run, truth = [], []
    for u in range(50):
        ranked = rng.choice(items, size=int(rng.integers(3, 20)), replace=False)
        run += [(f"u{u}", item, r + 1) for r, item in enumerate(ranked)]
        judged = rng.choice(items, size=int(rng.integers(1, 9)), replace=False)
        truth += [(f"u{u}", item, int(rng.integers(0, 3))) for item in judged]
    return (pd.DataFrame(run, columns=["user_id", "item_id", "rank"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
            _train(popularity), popularity)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("k", [5, None])
def test_the_definitions_with_loops(seed, k):
    run, truth, train, popularity = _generated(seed)
    at = f"@{k}" if k else "@all"
    metrics = [f"ips_recall(gamma=1.5){at}", f"ips_recall(gamma=1.5, sn=False){at}",
               f"ips_precision(gamma=0.5){at}", f"ips_precision(gamma=0.5, sn=False){at}",
               f"ips_dcg(gamma=2){at}", f"ips_dcg(gamma=2, sn=False){at}",
               f"ips_ndcg(gamma=2){at}", f"pop_recall(beta=0.3){at}"]
    ev = rankeval.evaluate(run, truth, metrics=",".join(metrics), train=train)
    top = max(popularity.values())
    per_user = ev.per_user.set_index("user_id")
    checked = 0
    for user in per_user.index:
        ranking = run[run.user_id == user].sort_values("rank").item_id.tolist()
        depth = k or len(ranking)
        relevant = [i for i in truth[(truth.user_id == user) & (truth.relevance > 0)].item_id
                    if i in popularity]
        want = []
        for name, e, sn in (("recall", 1.25, True), ("recall", 1.25, False),
                            ("precision", 0.75, True), ("precision", 0.75, False),
                            ("dcg", 1.5, True), ("dcg", 1.5, False), ("ndcg", 1.5, True),
                            ("pop", 0.3, True)):
            w = {i: (popularity[i] / (top if name != "pop" else 1)) ** -e for i in relevant}
            hits = {i: r + 1 for r, i in enumerate(ranking[:depth]) if i in w}
            total, n = sum(w.values()), len(w)
            scale = n / total if sn and total else 1.0
            if not relevant:
                want.append(math.nan)
            elif name in ("recall", "pop"):
                want.append(sum(w[i] for i in hits) / (total if sn else n))
            elif name == "precision":
                want.append(sum(w[i] for i in hits) * scale / depth)
            else:
                dcg = sum(w[i] / math.log2(r + 1) for i, r in hits.items()) * scale
                ideal = sum(1 / math.log2(j + 1) for j in range(1, min(n, k or n) + 1))
                want.append(dcg if name == "dcg" else dcg / ideal)
        got = per_user.loc[user, [str(s) for s in ev.specs]].to_numpy(dtype=float)
        assert got == pytest.approx(np.array(want), abs=1e-12, nan_ok=True), user
        checked += bool(relevant)
    assert checked > 20


def test_equal_weights_are_the_plain_metrics():
    """gamma = -1 weighs every item alike: the metrics of binary relevance, when every
    relevant item was seen in training."""
    run, truth, train, popularity = _generated(3)
    truth = truth[truth.item_id.isin(list(popularity))].assign(
        relevance=lambda t: (t.relevance > 0).astype(int))
    ev = rankeval.evaluate(run, truth, metrics="ips_recall(gamma=-1)@5,recall@5,"
                           "ips_precision(gamma=-1)@5,precision@5,ips_ndcg(gamma=-1)@5,"
                           "ndcg@5,ips_dcg(gamma=-1)@5,dcg@5", train=train)
    values = list(ev.metrics.values())
    for ours, plain in zip(values[::2], values[1::2], strict=True):
        assert ours == pytest.approx(plain, abs=1e-12)


def test_unbiased_under_the_popularity_model():
    """Each relevant item of a complete set is observed with probability
    (popularity / the largest)^((gamma + 1) / 2): over many draws, the IPS precision and
    DCG average to the complete set's precision and DCG (within 4 standard errors), and the
    self-normalised recall lands far nearer the complete set's recall than plain recall."""
    rng = np.random.default_rng(11)
    items = [f"i{j}" for j in range(60)]
    popularity = {item: int(rng.integers(1, 50)) for item in items}
    train = _train(popularity)
    gamma, top = 1.0, max(popularity.values())
    chance = {i: (popularity[i] / top) ** ((gamma + 1) / 2) for i in items}
    complete = {f"u{u}": list(rng.choice(items, size=12, replace=False)) for u in range(40)}
    run = pd.DataFrame([(u, i, r + 1) for u in complete
                        for r, i in enumerate(rng.permutation(items)[:20])],
                       columns=["user_id", "item_id", "rank"])
    full = pd.DataFrame([(u, i, 1) for u, s in complete.items() for i in s],
                        columns=["user_id", "item_id", "relevance"])
    metrics = "precision@10,dcg@10,recall@10"
    truth_values = rankeval.evaluate(run, full, metrics=metrics).metrics
    found: dict[str, list[float]] = {"ips_p": [], "ips_dcg": [], "sn_r": [], "plain_r": []}
    for _ in range(150):
        seen = full[[rng.random() < chance[i] for i in full.item_id]]
        ev = rankeval.evaluate(run, seen, metrics="ips_precision(gamma=1, sn=False)@10,"
                               "ips_dcg(gamma=1, sn=False)@10,ips_recall(gamma=1)@10,"
                               "recall@10", train=train, skip_missing_users=True)
        for key, value in zip(found, ev.metrics.values(), strict=True):
            found[key].append(value)
    # users without an observed item are left out of a draw: the full set is the reference
    for key, name in (("ips_p", "precision@10"), ("ips_dcg", "dcg@10")):
        values = np.array(found[key])
        se = values.std() / math.sqrt(len(values))
        assert abs(values.mean() - truth_values[name]) < 4 * se + 0.02 * truth_values[name]
    assert abs(np.mean(found["sn_r"]) - truth_values["recall@10"]) < 0.5 * abs(
        np.mean(found["plain_r"]) - truth_values["recall@10"])


def test_gamma_or_a_file_is_required_and_train_with_gamma():
    """The popularity model is an assumption: --train alone does not choose it."""
    run, truth, train, _ = _generated(4)
    with pytest.raises(OptionError, match=r"needs propensity FILE .* or gamma= and train"):
        rankeval.evaluate(run, truth, metrics="ips_recall@10", train=train)
    with pytest.raises(OptionError, match="train"):
        rankeval.evaluate(run, truth, metrics="ips_recall(gamma=1)@10")
    with pytest.raises(OptionError, match="at least -1"):
        rankeval.evaluate(run, truth, metrics="ips_recall(gamma=-2)@10", train=train)
