"""``--compat recbole`` and ``--compat recommenders`` reproduce their tools' numbers.

The oracles are the tools' formulas, written out here from their published source (RecBole
1.2 ``recbole/evaluator/metrics.py``; Microsoft Recommenders 1.2
``recommenders/evaluation/python_evaluation.py``): both pin old numpy and torch or Spark, so
they are not installed. Each formula runs on its tool's own data model (RecBole: a users x K
matrix of item ids and a hit matrix; Recommenders: pandas frames of the top K), on
MovieLens-100K-shaped data made here: Zipf popularity, tied scores, users of the truth without
predictions, graded truth. rankeval computes with the preset alone (no other option).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankeval import evaluate

K = (1, 5, 10, 20)
RELEVANCE = ["precision", "recall", "ndcg", "map", "mrr", "hit_rate"]


def _world(seed: int, users: int = 240, items: int = 420, depth: int = 20):
    """Training interactions with Zipf popularity; per user a list of ``depth`` unseen items
    whose scores tie often; truth of 1-12 unseen items, graded 1-5."""
    rng = np.random.default_rng(seed)
    ids = np.array([str(i) for i in rng.permutation(np.arange(1, items + 1))])
    weight = 1.0 / np.arange(1, items + 1) ** 1.1
    weight /= weight.sum()
    train, preds, truth = [], [], []
    for u in range(users):
        seen = set(rng.choice(items, size=int(rng.integers(5, 60)), replace=False, p=weight))
        train += [(f"u{u}", ids[i]) for i in seen]
        unseen = np.array([i for i in range(items) if i not in seen])
        listed = rng.choice(unseen, size=depth, replace=False)
        scores = np.round(rng.random(depth) * 6) / 2  # seven values: ties in most lists
        if u % 17 != 3:  # a few truth users get no list
            preds += [(f"u{u}", ids[i], s) for i, s in zip(listed, scores, strict=True)]
        judged = rng.choice(np.concatenate([listed[:8], rng.choice(unseen, 6)]),
                            size=int(rng.integers(1, 13)))
        truth += [(f"u{u}", ids[i], float(rng.integers(1, 6))) for i in set(judged)]
    return (pd.DataFrame(preds, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
            pd.DataFrame(train, columns=["user_id", "item_id"]),
            pd.DataFrame({"item_id": ids}))


@pytest.fixture(scope="module")
def world():
    return _world(20261128)


# -- RecBole ------------------------------------------------------------------------------


def _recbole_matrix(preds: pd.DataFrame, truth: pd.DataFrame, depth: int):
    """RecBole's view: the users with a test item, each with a full top-``depth`` list (its
    order among tied scores: rankeval's default, item id descending), and the hit matrix."""
    users = sorted(set(truth.user_id) & set(preds.user_id))
    ordered = preds.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
    lists = {u: list(g.item_id)[:depth] for u, g in ordered.groupby("user_id")}
    matrix = np.array([lists[u] for u in users])
    relevant = {u: set(g.item_id) for u, g in truth[truth.relevance > 0].groupby("user_id")}
    hits = np.array([[i in relevant[u] for i in lists[u]] for u in users], dtype=float)
    n_relevant = np.array([len(relevant[u]) for u in users], dtype=float)
    return users, matrix, hits, n_relevant


def test_recbole_preset_reads_recbole_s_order_of_ties_from_its_ranks(world):
    """RecBole's top-K lists are its torch.topk order, which orders tied scores its own way:
    a run exported with those ranks (here a random order within each tie) equals RecBole's
    metrics under the preset, which orders by rank; ordered by score it would not."""
    preds, truth, _, _ = world
    rng = np.random.default_rng(7)
    shuffled = preds.assign(noise=rng.random(len(preds))).sort_values(
        ["user_id", "score", "noise"], ascending=[True, False, True])
    ranked = shuffled.assign(rank=shuffled.groupby("user_id").cumcount() + 1).drop(
        columns="noise")
    users = sorted(set(truth.user_id) & set(ranked.user_id))
    lists = {u: list(g.sort_values("rank").item_id) for u, g in ranked.groupby("user_id")}
    relevant = {u: set(g.item_id) for u, g in truth[truth.relevance > 0].groupby("user_id")}
    hits = np.array([[i in relevant[u] for i in lists[u]] for u in users], dtype=float)
    n_relevant = np.array([len(relevant[u]) for u in users], dtype=float)
    theirs = _recbole_relevance(hits, n_relevant)
    ours = evaluate(ranked, truth, RELEVANCE, list(K), compat="recbole")
    by_score = evaluate(ranked, truth, RELEVANCE, list(K), compat="recbole", order_by="score")
    table = ours.per_user.set_index("user_id").loc[users]
    differs = 0
    for name in RELEVANCE:
        for k in K:
            np.testing.assert_allclose(table[f"{name}@{k}"], theirs[name][:, k - 1],
                                       atol=1e-12, err_msg=f"{name}@{k}")
            differs += by_score.metrics[f"{name}@{k}"] != pytest.approx(
                ours.metrics[f"{name}@{k}"], abs=1e-12)
    assert differs  # the ties are met: ordered by score, the numbers move


def _recbole_relevance(hits: np.ndarray, n_relevant: np.ndarray) -> dict[str, np.ndarray]:
    """Per user and K = 1..depth: RecBole's Precision, Recall, NDCG (binary gain, the ideal
    over min(|R|, K) items), MAP (divided by min(|R|, K)), MRR and Hit."""
    depth = hits.shape[1]
    ranks = np.arange(1, depth + 1)
    found = np.cumsum(hits, axis=1)
    discount = 1.0 / np.log2(ranks + 1)
    ideal_len = np.minimum(n_relevant[:, None], ranks[None, :]).astype(int)
    ideal = np.cumsum(discount)[ideal_len - 1]
    first = np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, depth + 1)
    return {
        "precision": found / ranks,
        "recall": found / n_relevant[:, None],
        "ndcg": np.cumsum(hits * discount, axis=1) / ideal,
        "map": np.cumsum(found / ranks * hits, axis=1) / ideal_len,
        "mrr": np.where(ranks[None, :] >= first[:, None], 1.0 / first[:, None], 0.0),
        "hit_rate": (found > 0).astype(float),
    }


def test_recbole_relevance_metrics(world):
    preds, truth, _, _ = world
    ours = evaluate(preds, truth, RELEVANCE, list(K), compat="recbole")
    users, _, hits, n_relevant = _recbole_matrix(preds, truth, max(K))
    theirs = _recbole_relevance(hits, n_relevant)
    table = ours.per_user.set_index("user_id").loc[users]
    for name, values in theirs.items():
        for k in K:
            np.testing.assert_allclose(table[f"{name}@{k}"], values[:, k - 1], atol=1e-12,
                                       err_msg=f"{name}@{k}")
    assert any((ours.per_user["ndcg@10"] != evaluate(preds, truth, ["ndcg@10"]).per_user[
        "ndcg@10"]).to_numpy()), "the graded truth must tell binary gain apart"


def test_recbole_beyond_accuracy_metrics(world):
    preds, truth, train, catalog = world
    names = ["coverage", "gini", "entropy", "arp", "long_tail"]
    ours = evaluate(preds, truth, names, list(K), compat="recbole", train=train,
                    catalog=catalog)
    users, matrix, _, _ = _recbole_matrix(preds, truth, max(K))
    num_items = len(catalog) + 1  # RecBole's item ids count its padding id 0
    count = train.groupby("item_id").size()
    # TailPercentage (tail_ratio 0.1): the training items by count, then id; the first 10%
    by_count = sorted(count.items(), key=lambda kv: (kv[1], kv[0]))
    tail = {i for i, _ in by_count[:max(int(len(by_count) * 0.1), 1)]}
    pop = np.vectorize(lambda i: count.get(i, 0))(matrix).astype(float)
    in_tail = np.vectorize(lambda i: i in tail)(matrix).astype(float)
    for k in K:
        top = matrix[:, :k]
        values, counts = np.unique(top, return_counts=True)
        assert ours.metrics[f"coverage@{k}"] == pytest.approx(len(values) / num_items,
                                                               abs=1e-15)
        p = counts / top.size
        entropy = float(-(p * np.log(p)).sum() / len(values))
        assert ours.metrics[f"entropy@{k}"] == pytest.approx(entropy, abs=1e-12)
        c = np.sort(counts)
        idx = np.arange(num_items - len(c) + 1, num_items + 1)
        gini = float(np.sum((2 * idx - num_items - 1) * c) / top.size / num_items)
        assert ours.metrics[f"gini@{k}"] == pytest.approx(gini, abs=1e-12)
        table = ours.per_user.set_index("user_id").loc[users]
        np.testing.assert_allclose(table[f"arp@{k}"], pop[:, :k].mean(axis=1), atol=1e-9)
        np.testing.assert_allclose(table[f"long_tail@{k}"], in_tail[:, :k].mean(axis=1),
                                   atol=1e-12)
    assert 0 < ours.metrics["long_tail@20"] < 1


# -- Microsoft Recommenders ---------------------------------------------------------------


def _recommenders_top(preds: pd.DataFrame, truth: pd.DataFrame, k: int):
    """merge_ranking_true_pred with relevancy_method='top_k': the users of both frames, each
    list's top k by a stable sort on (user, prediction descending), the hits and counts."""
    common = set(truth.user_id) & set(preds.user_id)
    ordered = preds[preds.user_id.isin(common)].sort_values(
        ["user_id", "score"], ascending=[True, False], kind="stable")
    top = ordered.groupby("user_id").head(k).copy()
    top["rank"] = top.groupby("user_id").cumcount() + 1
    hit = top.merge(truth[["user_id", "item_id"]], on=["user_id", "item_id"])
    actual = truth[truth.user_id.isin(common)].groupby("user_id").size()
    return top, hit, actual, len(common)


def _recommenders_metrics(preds, truth, k: int) -> dict[str, float]:
    _, hit, actual, n_users = _recommenders_top(preds, truth, k)
    hits = hit.groupby("user_id").size().reindex(actual.index, fill_value=0)
    dcg = (1.0 / np.log(1 + hit["rank"])).groupby(hit.user_id).sum()
    irank = np.arange(1, k + 1)
    idcg = actual.map(lambda n: (1.0 / np.log(1 + irank[:min(n, k)])).sum())
    hit = hit.sort_values(["user_id", "rank"])
    rr = ((hit.groupby("user_id").cumcount() + 1) / hit["rank"]).groupby(hit.user_id).sum()
    return {
        "precision": float(hits.sum() / k / n_users),
        "recall": float((hits / actual).sum() / n_users),
        "ndcg": float((dcg.reindex(actual.index, fill_value=0) / idcg).mean()),
        "map": float((rr / actual.clip(upper=k)).sum() / n_users),
    }


@pytest.mark.parametrize("k", K)
def test_recommenders_relevance_metrics(world, k):
    preds, truth, _, _ = world
    ours = evaluate(preds, truth, ["precision", "recall", "ndcg", "map"], [k],
                    compat="recommenders").metrics
    for name, value in _recommenders_metrics(preds, truth, k).items():
        assert ours[f"{name}@{k}"] == pytest.approx(value, abs=1e-12), name


@pytest.mark.parametrize("k", K)
def test_recommenders_novelty_and_coverage(world, k):
    """novelty: -log2(interactions of i / all interactions) over every recommended slot,
    unseen items adding 0 to the sum but counting; catalog_coverage: distinct recommended /
    distinct training items; distributional_coverage: entropy in bits."""
    preds, truth, train, _ = world
    ours = evaluate(preds, truth, ["novelty", "coverage", "entropy"], [k],
                    compat="recommenders", train=train).metrics
    top, _, _, _ = _recommenders_top(preds, truth, k)
    count = train.groupby("item_id").size()
    novelty = -np.log2(count / len(train))
    reco = top.groupby("item_id").size()
    known = reco.index.intersection(novelty.index)
    theirs = float((reco[known] * novelty[known]).sum() / len(top))
    assert ours[f"novelty@{k}"] == pytest.approx(theirs, abs=1e-12)
    assert ours[f"coverage@{k}"] == pytest.approx(
        top.item_id.nunique() / train.item_id.nunique(), abs=1e-15)
    p = reco / len(top)
    assert ours[f"entropy@{k}"] == pytest.approx(float(-(p * np.log2(p)).sum()), abs=1e-12)


def test_each_new_setting_alone_changes_only_its_metrics(world):
    """The settings the presets brought are options of their own, each named in the footer."""
    preds, truth, train, catalog = world
    base = evaluate(preds, truth, ["ndcg@10", "entropy@10", "novelty@10", "gini@10"],
                    train=train, catalog=catalog)
    for option, value, changed in [("gain", "binary", "ndcg@10"),
                                   ("entropy_unit", "nats", "entropy@10"),
                                   ("entropy_per_item", True, "entropy@10"),
                                   ("novelty_model", "choice", "novelty@10"),
                                   ("catalog_padding", 1, "gini@10")]:
        other = evaluate(preds, truth, list(base.metrics), train=train, catalog=catalog,
                         **{option: value})
        for name, v in base.metrics.items():
            assert (other.metrics[name] != v) == (name == changed), (option, name)
        assert getattr(other.settings, option) == value
    nats = evaluate(preds, truth, ["entropy@10"], entropy_unit="nats").metrics["entropy@10"]
    assert nats == pytest.approx(base.metrics["entropy@10"] * math.log(2), abs=1e-12)


# -- ranx ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.xdist_group("ranx")  # ranx compiles its numba kernels once per worker
@pytest.mark.parametrize("seed", [5, 6])
def test_ranx_preset_equals_ranx_user_by_user(seed):
    """ranx itself, on graded truth with queries that hold nothing relevant (ranx scores them
    0 and averages them in) and queries missing from the run. Untied runs: make_comparable
    sorts ranx's Run a second time, which moves ties again (tied runs: the test below)."""
    import ranx

    from .datagen import as_dicts, generate

    preds, truth = generate(seed, 150, 300, 30, 10)
    qrels, run = as_dicts(preds, truth)
    pairs = {"precision": "precision", "recall": "recall", "f1": "f1", "hit_rate": "hit_rate",
             "mrr": "mrr", "map": "map", "ndcg": "ndcg", "dcg": "dcg"}
    ks = [1, 3, 5, 10, 20]
    ours = evaluate(preds, truth, [*pairs, "r_precision", "rbp"], ks, compat="ranx")
    theirs = {f"{t}@{k}": f"{m}@{k}" for m, t in pairs.items() for k in ks}
    theirs |= {"r-precision": "r_precision", "rbp.8": "rbp"}
    q, r = ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)
    ranx.evaluate(q, r, list(theirs), make_comparable=True, return_mean=False)
    table = ours.per_user.set_index("user_id")
    assert set(table.index) == set(qrels)  # every query of the qrels, as ranx scores them
    assert (table["recall@20"] == 0).sum() > 3
    for name, mine in theirs.items():
        values = r.scores[name]
        np.testing.assert_allclose(table.loc[list(values), mine], list(values.values()),
                                   atol=1e-12, err_msg=name)
        assert ours.metrics[mine] == pytest.approx(np.mean(list(values.values())), abs=1e-12)


RANX_PAIRS = {"precision": "precision", "recall": "recall", "f1": "f1", "hit_rate": "hit_rate",
              "mrr": "mrr", "map": "map", "ndcg": "ndcg", "dcg": "dcg"}


def _tied_world(seed: int, users: int = 60, items: int = 500):
    """Lists of 30-200 items (past numba's insertion-sort size, so its partitions move tied
    scores) whose scores take five values; graded truth 0-3, some users with grade 0 alone;
    the rows shuffled, so that each user's rows are scattered over the file."""
    rng = np.random.default_rng(seed)
    preds, truth = [], []
    for u in range(users):
        listed = rng.choice(items, size=int(rng.integers(30, 201)), replace=False)
        scores = np.round(rng.random(len(listed)) * 4) / 4
        preds += [(f"q{u}", f"d{i}", s) for i, s in zip(listed, scores, strict=True)]
        judged = np.unique(np.concatenate([rng.choice(listed, 12), rng.choice(items, 4)]))
        grades = rng.integers(0, 4, len(judged)) if u % 9 else np.zeros(len(judged), int)
        truth += [(f"q{u}", f"d{i}", float(g)) for i, g in zip(judged, grades, strict=True)]
    preds = pd.DataFrame(preds, columns=["user_id", "item_id", "score"])
    return (preds.iloc[rng.permutation(len(preds))].reset_index(drop=True),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


@pytest.mark.slow
@pytest.mark.xdist_group("ranx")  # ranx compiles its numba kernels once per worker
@pytest.mark.parametrize("seed", [7, 8])
@pytest.mark.parametrize("entry", ["from_dict", "from_df"])
def test_ranx_preset_orders_ties_as_ranx(seed, entry):
    """ranx itself on runs full of ties: its Run sorts each query's documents, in the order
    they came (a dict's, a DataFrame's rows), by numba's unstable quicksort; ``--compat ranx``
    (``ties="ranx"``) gives every measure of every user exactly, and trec_eval's rule, the
    preset's before, does not."""
    import ranx

    preds, truth = _tied_world(seed)
    qrels: dict[str, dict[str, int]] = {}
    for u, i, r in truth.itertuples(index=False):
        qrels.setdefault(u, {})[i] = int(r)
    if entry == "from_dict":
        run: dict[str, dict[str, float]] = {}
        for u, i, s in preds.itertuples(index=False):
            run.setdefault(u, {})[i] = float(s)
        r = ranx.Run.from_dict(run)
    else:
        ids = preds.astype({"user_id": object, "item_id": object})  # what from_df takes
        r = ranx.Run.from_df(ids, q_id_col="user_id", doc_id_col="item_id")
    ks = [1, 3, 5, 10, 20, 50]
    names = [*RANX_PAIRS, "r_precision", "rbp"]
    theirs = {f"{t}@{k}": f"{m}@{k}" for m, t in RANX_PAIRS.items() for k in ks}
    theirs |= {"r-precision": "r_precision", "rbp.8": "rbp"}
    ranx.evaluate(ranx.Qrels.from_dict(qrels), r, list(theirs), return_mean=False)
    ours = evaluate(preds, truth, names, ks, compat="ranx")
    assert ours.settings.ties == "ranx" and ours.tied_users == len(qrels)
    table = ours.per_user.set_index("user_id")
    for name, mine in theirs.items():
        values = r.scores[name]
        np.testing.assert_allclose(table.loc[list(values), mine], list(values.values()),
                                   rtol=0, atol=1e-12, err_msg=name)
        assert ours.metrics[mine] == pytest.approx(np.mean(list(values.values())), abs=1e-12)
    trec = evaluate(preds, truth, names, ks, compat="ranx", ties="trec").per_user
    assert not np.allclose(trec.set_index("user_id").loc[table.index, list(theirs.values())],
                           table[list(theirs.values())], atol=1e-12, rtol=0)


# -- the mapping table's oracles (tests/test_peer_table.py) ---------------------------------


def recbole_oracle(world, k: int) -> tuple[list[str], dict[str, np.ndarray | float]]:
    """RecBole's metrics at ``k`` by its names (``foreign_names.PEER_TABLE``): per user (an
    array over the users returned) or for the run (a float), the formulas above."""
    preds, truth, train, catalog = world
    users, matrix, hits, n_relevant = _recbole_matrix(preds, truth, max(K))
    relevance = _recbole_relevance(hits, n_relevant)
    names = {"precision": "Precision", "recall": "Recall", "ndcg": "NDCG", "map": "MAP",
             "mrr": "MRR", "hit_rate": "Hit"}
    out: dict[str, np.ndarray | float] = {
        f"{names[n]}@{k}": v[:, k - 1] for n, v in relevance.items()}
    num_items = len(catalog) + 1  # the padding id 0
    count = train.groupby("item_id").size()
    by_count = sorted(count.items(), key=lambda kv: (kv[1], kv[0]))
    tail = {i for i, _ in by_count[:max(int(len(by_count) * 0.1), 1)]}
    top = matrix[:, :k]
    values, counts = np.unique(top, return_counts=True)
    p = counts / top.size
    c = np.sort(counts)
    idx = np.arange(num_items - len(c) + 1, num_items + 1)
    out |= {
        f"ItemCoverage@{k}": len(values) / num_items,
        f"ShannonEntropy@{k}": float(-(p * np.log(p)).sum() / len(values)),
        f"GiniIndex@{k}": float(np.sum((2 * idx - num_items - 1) * c) / top.size / num_items),
        f"AveragePopularity@{k}": np.vectorize(lambda i: count.get(i, 0))(top).astype(
            float).mean(axis=1),
        f"TailPercentage@{k}": np.vectorize(lambda i: i in tail)(top).astype(float).mean(
            axis=1),
    }
    return users, out


def recommenders_oracle(world, k: int) -> dict[str, float]:
    """Microsoft Recommenders' python_evaluation at ``k`` by its names, for the run."""
    preds, truth, train, _ = world
    out = {f"{n}_at_k": v for n, v in _recommenders_metrics(preds, truth, k).items()}
    top, _, _, _ = _recommenders_top(preds, truth, k)
    count = train.groupby("item_id").size()
    novelty = -np.log2(count / len(train))
    reco = top.groupby("item_id").size()
    known = reco.index.intersection(novelty.index)
    p = reco / len(top)
    return out | {"novelty": float((reco[known] * novelty[known]).sum() / len(top)),
                  "catalog_coverage": top.item_id.nunique() / train.item_id.nunique(),
                  "distributional_coverage": float(-(p * np.log2(p)).sum())}
