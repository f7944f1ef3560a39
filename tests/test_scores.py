"""evaluate_scores: a model's scores (dense, factors, or a function of a block of users) give
exactly what the file path gives on the same top-K lists, ties and seen items included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rankeval import evaluate, evaluate_scores
from rankeval.api import scores
from rankeval.errors import OptionError

METRICS = ["ndcg", "map", "recall", "mrr", "coverage", "arp", "novelty", "personalization"]


def _data(seed: int, n_users: int = 200, n_items: int = 90, tied: bool = False):
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(n_users, 6)), rng.normal(size=(n_items, 6))
    dense = u @ v.T
    if tied:  # few distinct scores: the tie rule decides, across the K-th place
        dense = np.round(dense)
        u = v = None
    test = sp.random(n_users, n_items, density=0.04, random_state=seed, format="csr")
    test.data = rng.integers(1, 4, len(test.data)).astype(float)
    train = sp.random(n_users, n_items, density=0.08, random_state=seed + 1, format="csr")
    train.data[:] = 1.0
    train = (train - train.multiply(test > 0)).tocsr()
    train.eliminate_zeros()
    return dense, (u, v), test, train


def _as_files(dense, test, train, k, tmp_path):
    """The oracle: the same lists as a file, every item tied with the K-th kept, as the
    scores path keeps them, then the ordinary path."""
    masked = dense.copy()
    masked[train.nonzero()] = -np.inf
    rows = []
    for user in range(dense.shape[0]):
        s = masked[user]
        kth = np.sort(s)[::-1][k - 1]
        rows += [(str(user), str(i), s[i]) for i in np.flatnonzero((s >= kth) & np.isfinite(s))]
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    t, tr = test.tocoo(), train.tocoo()
    truth = pd.DataFrame({"user_id": t.row.astype(str), "item_id": t.col.astype(str),
                          "relevance": t.data})
    seen = pd.DataFrame({"user_id": tr.row.astype(str), "item_id": tr.col.astype(str)})
    catalog = pd.DataFrame({"item_id": [str(i) for i in range(dense.shape[1])]})
    paths = {}
    for name, frame in (("p", preds), ("t", truth), ("train", seen), ("catalog", catalog)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


# Tied scores come from a rounded dense matrix (factors give distinct ones).
@pytest.mark.parametrize(("form", "tied"), [("dense", False), ("factors", False),
                                            ("callable", False), ("dense", True),
                                            ("callable", True)])
def test_scores_equal_the_file_path(tmp_path, form, tied):
    dense, factors, test, train = _data(3, tied=tied)
    given = {"dense": dense, "factors": factors,
             "callable": lambda rows: dense[rows]}[form]
    extra = {"n_users": dense.shape[0], "n_items": dense.shape[1]} if form == "callable" else {}
    ours = evaluate_scores(given, test, METRICS, k=[5, 10], exclude=train, **extra)
    paths = _as_files(dense, test, train, 10, tmp_path)
    oracle = evaluate(str(paths["p"]), str(paths["t"]), METRICS, [5, 10],
                      train=str(paths["train"]), catalog=str(paths["catalog"]))
    assert ours.metrics == oracle.metrics  # bit for bit: the same lists, the same engine
    pd.testing.assert_frame_equal(ours.per_user, oracle.per_user)


def test_blocks_of_users_do_not_change_anything(monkeypatch):
    dense, _, test, train = _data(4)
    whole = evaluate_scores(dense, test, ["ndcg", "recall"], k=10, exclude=train)
    monkeypatch.setattr(scores, "_BLOCK_CELLS", 3 * dense.shape[1])  # 3 users per block
    blocked = evaluate_scores(dense, test, ["ndcg", "recall"], k=10, exclude=train)
    assert blocked.metrics == whole.metrics


def test_ids_exclusions_as_tables_and_errors():
    dense, _, test, train = _data(5, n_users=20, n_items=15)
    users = [f"user{i}" for i in range(20)]
    items = [f"item{i}" for i in range(15)]
    t, tr = test.tocoo(), train.tocoo()
    truth = pd.DataFrame({"user_id": np.array(users)[t.row], "item_id": np.array(items)[t.col],
                          "relevance": t.data})
    seen = pd.DataFrame({"user_id": np.array(users)[tr.row], "item_id": np.array(items)[tr.col]})
    named = evaluate_scores(dense, truth, ["ndcg@5"], users=users, items=items, exclude=seen)
    plain = evaluate_scores(dense, test, ["ndcg@5"], exclude=train)
    assert named.metrics == plain.metrics
    assert set(named.per_user.user_id) <= set(users)
    with pytest.raises(OptionError, match="2 names for 20 users"):
        evaluate_scores(dense, test, ["ndcg@5"], users=["a", "b"])
    with pytest.raises(OptionError, match="finite"):
        evaluate_scores(np.where(dense > 1, np.nan, dense), test, ["ndcg@5"])
    with pytest.raises(OptionError, match="n_users and n_items"):
        evaluate_scores(lambda rows: dense[rows], test, ["ndcg@5"])
    with pytest.raises(OptionError, match="a cut-off K"):
        evaluate_scores(dense, test, ["ndcg@all"])
    with pytest.raises(OptionError, match="same d"):
        evaluate_scores((np.ones((3, 2)), np.ones((4, 3))), test, ["ndcg@5"])


def test_float32_factors_score_in_float32(tmp_path):
    """Scores are the model's own float32 product; the file path on those scores agrees."""
    _, (u, v), test, train = _data(6)
    u32, v32 = u.astype(np.float32), v.astype(np.float32)
    ours = evaluate_scores((u32, v32), test, ["ndcg", "recall"], k=10, exclude=train)
    dense = (u32 @ v32.T).astype(np.float64)
    paths = _as_files(dense, test, train, 10, tmp_path)
    oracle = evaluate(str(paths["p"]), str(paths["t"]), ["ndcg", "recall"], 10)
    assert ours.metrics == oracle.metrics
