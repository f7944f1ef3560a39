"""Beyond accuracy (SPEC section 7): seen-item exclusion, coverage, entropy, Gini,
personalization, ARP, long tail, novelty. SPEC worked example 7, brute force, Microsoft
Recommenders' formulas where the conventions match, and invariants."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.errors import OptionError

BEYOND = ["coverage", "item_coverage", "entropy", "norm_entropy", "gini", "personalization",
          "arp", "long_tail", "novelty"]


def _example7():
    train = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u3", "u3"],
                          "item_id": list("ABBCABD")})
    catalog = pd.DataFrame({"item_id": list("ABCDEFGH")})
    preds = pd.DataFrame({"user_id": ["u1"] * 3 + ["u2"] * 3 + ["u3"] * 3,
                          "item_id": list("BCEAEFCEG"), "rank": [1, 2, 3] * 3})
    truth = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u3"], "item_id": list("CEFG"),
                          "relevance": [1, 2, 1, 1]})
    return preds, truth, train, catalog


def test_spec_worked_example_7():
    preds, truth, train, catalog = _example7()
    r = evaluate(preds, truth, ["precision", *BEYOND], 2, train=train, catalog=catalog,
                 exclude_seen=True)
    expected = {
        "precision@2": 1 / 3, "coverage@2": 0.375, "item_coverage@2": 3,
        "entropy@2": 1.4591479170272448, "norm_entropy@2": 1.4591479170272448 / 3,
        "gini@2": 34 / 48, "personalization@2": 1 / 3, "arp@2": 2 / 3, "long_tail@2": 0.5,
        "novelty@2": 1.6258145836939113,
    }
    assert r.metrics == pytest.approx(expected, abs=1e-12)
    assert r.corpus == ["coverage@2", "item_coverage@2", "entropy@2", "norm_entropy@2",
                        "gini@2", "personalization@2"]
    assert list(r.per_user.columns) == ["user_id", "precision@2", "arp@2", "long_tail@2",
                                        "novelty@2"]
    notices = {n.code: n.count for n in r.notices}
    assert notices["seen_dropped"] == 1  # u1's B
    assert notices["unseen_items"] == 1  # E, scored log2(3 + 1) by novelty
    with pytest.raises(OptionError, match="corpus-level"):
        r.values("gini@2")


def test_example_7_from_the_command_line(run_cli, tmp_path):
    preds, truth, train, catalog = _example7()
    paths = {}
    for name, frame in (("p", preds), ("t", truth), ("train", train), ("catalog", catalog)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    r = run_cli("score", paths["p"], paths["t"], "--train", paths["train"], "--catalog",
                paths["catalog"], "--exclude-seen", "-k", "2", "-m", ",".join(BEYOND),
                "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["metrics"]["gini@2"] == pytest.approx(34 / 48, abs=1e-15)
    assert doc["corpus_metrics"][0] == "coverage@2"
    assert doc["settings"]["exclude_seen"] is True
    assert doc["inputs"]["train"]["rows"] == 7 and doc["inputs"]["catalog"]["rows"] == 8
    assert "1 prediction row of" in r.stderr and "seen in training and dropped" in r.stderr
    table = run_cli("score", paths["p"], paths["t"], "--train", paths["train"],
                    "--exclude-seen", "-k", "2", "-m", "gini,arp")
    assert "corpus-level (one value for the whole run, not a mean over users): gini" in \
        table.stdout
    assert "seen items excluded" in table.stdout
    assert "no --catalog: the catalog is the 7 items of --train and the predictions" in \
        table.stderr
    csv = run_cli("score", paths["p"], paths["t"], "--train", paths["train"], "-k", "2",
                  "-m", "gini,arp", "-f", "csv")
    assert csv.stdout.splitlines()[1:] == [
        f"gini@2,gini,2,{csv.stdout.splitlines()[1].split(',')[3]},corpus",
        f"arp@2,arp,2,{csv.stdout.splitlines()[2].split(',')[3]},per_user"]


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "arp@5"], "arp needs --train"),
    (["-m", "coverage@5"], "coverage needs --catalog or --train"),
    (["--exclude-seen"], "--exclude-seen needs --train"),
    (["--exclude-seen-truth"], "--exclude-seen-truth needs --train"),
])
def test_a_metric_without_its_input_fails_before_reading(run_cli, write, args, message):
    preds = write("p.csv", "user_id,item_id,rank\nu,a,1\n")
    missing = str(write("t.csv", "x").parent / "no-such-truth.csv")  # never read
    r = run_cli("score", preds, missing, *args)
    assert r.exit_code == 2
    assert message in r.stderr and "no-such-truth" not in r.stderr
    with pytest.raises(OptionError, match=message.replace("--", "").replace("-", "_")):
        evaluate(str(preds), missing, [a for a in args if not a.startswith("-")] or None,
                 **{a.strip("-").replace("-", "_"): True for a in args if a.startswith("--")})


def test_exclusion_keeps_the_order_and_counts_short_lists():
    preds = pd.DataFrame({"user_id": ["a"] * 4 + ["b"] * 2,
                          "item_id": ["x", "y", "z", "w", "x", "y"], "rank": [1, 2, 3, 4, 1, 2]})
    truth = pd.DataFrame({"user_id": ["a", "b", "b"], "item_id": ["z", "y", "x"],
                          "relevance": 1.0})
    train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "w", "x"]})
    r = evaluate(preds, truth, ["mrr@2", "precision@2", "recall@2"], train=train,
                 exclude_seen=True)
    table = r.per_user.set_index("user_id")
    assert table.loc["a", "mrr@2"] == 0.5  # y, z: z moved up to rank 2
    assert table.loc["b", "precision@2"] == 0.5  # only y is left: divides by K
    counts = {n.code: n.count for n in r.notices}
    assert counts["seen_dropped"] == 3
    assert counts["short_after_exclusion"] == 1  # b had 2, has 1
    truth_too = evaluate(preds, truth, ["recall@2"], train=train, exclude_seen=True,
                         exclude_seen_truth=True)
    assert truth_too.per_user.set_index("user_id").loc["b", "recall@2"] == 1.0  # x dropped
    assert {n.code: n.count for n in truth_too.notices}["seen_truth_dropped"] == 1


def _lists(preds: pd.DataFrame, k: int) -> dict[str, list[str]]:
    top = preds.sort_values(["user_id", "rank"]).groupby("user_id").head(k)
    return {u: list(g.item_id) for u, g in top.groupby("user_id")}


@st.composite
def runs(draw):
    n_items = draw(st.integers(2, 12))
    items = [f"i{j}" for j in range(n_items)]
    preds, truth, train = [], [], []
    for u in range(draw(st.integers(1, 7))):
        listed = draw(st.lists(st.sampled_from(items), unique=True, min_size=1))
        preds += [(f"u{u}", i, r) for r, i in enumerate(listed, 1)]
        truth.append((f"u{u}", draw(st.sampled_from(items)), 1.0))
        train += [(f"u{u}", i) for i in draw(st.lists(st.sampled_from(items), unique=True))]
    train.append(("t", items[0]))  # never empty
    return (pd.DataFrame(preds, columns=["user_id", "item_id", "rank"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
            pd.DataFrame(train, columns=["user_id", "item_id"]),
            pd.DataFrame({"item_id": [*items, "spare"]}))


@settings(max_examples=80, deadline=None)
@given(runs(), st.sampled_from([1, 2, 3, 5]))
def test_corpus_metrics_by_brute_force(data, k):
    """Pairwise overlaps (a users x users loop), the mean-difference Gini, counted coverage."""
    preds, truth, train, catalog = data
    r = evaluate(preds, truth, BEYOND, k, train=train, catalog=catalog)
    lists = _lists(preds, k)
    users = [u for u in sorted(set(truth.user_id)) if u in lists]
    lists = {u: lists[u] for u in users}
    n = len(catalog)
    counts = pd.Series([i for v in lists.values() for i in v]).value_counts()
    assert r.metrics[f"coverage@{k}"] == pytest.approx(len(counts) / n, abs=1e-12)
    full = np.array([counts.get(i, 0) for i in catalog.item_id], dtype=float)
    gini = np.abs(full[:, None] - full[None, :]).sum() / (2 * n * n * full.mean())
    assert r.metrics[f"gini@{k}"] == pytest.approx(gini, abs=1e-12)
    pairs = list(itertools.combinations(users, 2))
    if pairs:
        overlap = np.mean([len(set(lists[a]) & set(lists[b])) / k for a, b in pairs])
        assert r.metrics[f"personalization@{k}"] == pytest.approx(1 - overlap, abs=1e-12)
    else:  # a mean over no pair of users: undefined (SPEC section 9), never 0
        assert math.isnan(r.metrics[f"personalization@{k}"])
        assert f"personalization@{k}" in r.undefined
    p = counts.to_numpy() / counts.sum()
    assert r.metrics[f"entropy@{k}"] == pytest.approx(-(p * np.log2(p)).sum(), abs=1e-12)
    for name in ("coverage", "gini", "norm_entropy", "long_tail"):
        assert -1e-12 <= r.metrics[f"{name}@{k}"] <= 1 + 1e-12, name
    assert not r.metrics[f"personalization@{k}"] > 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(runs(), st.sampled_from([1, 3]))
def test_popularity_metrics_by_hand(data, k):
    preds, truth, train, catalog = data
    r = evaluate(preds, truth, ["arp", "novelty", "long_tail"], k, train=train, catalog=catalog)
    pop = train.drop_duplicates().groupby("item_id").user_id.nunique()
    u_train = train.user_id.nunique()
    ranked = pop.reindex(catalog.item_id, fill_value=0)
    ranked = ranked.reset_index().sort_values(["user_id", "item_id"], ascending=[False, True])
    held = ranked.user_id.cumsum().to_numpy()
    head = set(ranked.item_id[: int(np.searchsorted(held, 0.8 * held[-1] - 1e-9)) + 1])
    table = r.per_user.set_index("user_id")
    for user, items in _lists(preds, k).items():
        if user not in table.index:
            continue
        p = [pop.get(i, 0) for i in items]
        info = [-math.log2(x / u_train) if x else math.log2(u_train + 1) for x in p]
        assert table.loc[user, f"arp@{k}"] == pytest.approx(np.mean(p), abs=1e-12)
        assert table.loc[user, f"novelty@{k}"] == pytest.approx(np.mean(info), abs=1e-12)
        tail = np.mean([i not in head for i in items])
        assert table.loc[user, f"long_tail@{k}"] == pytest.approx(tail, abs=1e-12)


def test_the_same_list_for_everyone():
    users = [f"u{i}" for i in range(50)]
    preds = pd.DataFrame([(u, f"i{j}", j + 1) for u in users for j in range(5)],
                         columns=["user_id", "item_id", "rank"])
    truth = pd.DataFrame({"user_id": users, "item_id": "i0", "relevance": 1.0})
    catalog = pd.DataFrame({"item_id": [f"i{j}" for j in range(40)]})
    r = evaluate(preds, truth, ["personalization", "coverage", "gini"], 5, catalog=catalog)
    assert r.metrics["personalization@5"] == 0.0
    assert r.metrics["coverage@5"] == 5 / 40
    assert r.metrics["gini@5"] == pytest.approx(1 - 5 / 40, abs=1e-12)


def test_microsoft_recommenders_formulas_where_conventions_match():
    """recommenders/evaluation/python_evaluation.py (recommenders-team/recommenders at
    b02c95e): catalog_coverage (line 1645: distinct recommended / distinct training items)
    and distributional_coverage (line 1679: Shannon entropy in bits of the recommendation
    counts), re-implemented from the published code. They match rankeval's coverage (with no
    --catalog, when every recommended item was seen in training) and entropy. Their novelty
    (line 1404) divides by training interactions, not users: a documented difference."""
    rng = np.random.default_rng(7)
    items = [f"i{j}" for j in range(60)]
    train = pd.DataFrame({"user_id": rng.choice([f"u{i}" for i in range(80)], 900),
                          "item_id": rng.choice(items, 900, p=np.arange(60, 0, -1) / 1830)}
                         ).drop_duplicates()
    seen = sorted(set(train.item_id))
    preds = pd.DataFrame([(f"u{u}", i, r + 1) for u in range(80)
                          for r, i in enumerate(rng.choice(seen, 10, replace=False))],
                         columns=["user_id", "item_id", "rank"])
    truth = preds.groupby("user_id").head(1).drop(columns="rank").assign(relevance=1.0)
    ours = evaluate(preds, truth, ["coverage@10", "entropy@10"], train=train).metrics
    catalog_coverage = preds.item_id.nunique() / train.item_id.nunique()
    counts = preds.groupby("item_id").size()
    p = counts / len(preds)
    distributional_coverage = -(p * np.log2(p)).sum()
    assert ours["coverage@10"] == pytest.approx(catalog_coverage, abs=1e-15)
    assert ours["entropy@10"] == pytest.approx(distributional_coverage, abs=1e-12)


def test_compare_reports_corpus_metrics_without_a_test(run_cli):
    s = "sample_data/"
    r = run_cli("compare", s + "preds.csv", s + "popular.csv", s + "truth.csv", "--train",
                s + "train.csv", "-m", "ndcg@10,coverage@10,novelty@10", "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    cells = {c["metric"]: c for c in json.loads(r.stdout)["comparisons"]}
    cov = cells["coverage@10"]
    assert cov["p_value"] is None and cov["significant"] is None and cov["ci"] == [None, None]
    assert cov["delta"] == pytest.approx(cov["mean"] - cov["baseline_mean"], abs=1e-15)
    assert cov["mean"] == 10 / 400  # the popular model: the same 10 items for everyone
    assert cells["novelty@10"]["p_value"] is not None


def test_recbole_and_elliot_formulas_where_conventions_match():
    """RUCAIBox/RecBole recbole/evaluator/metrics.py (025bef6): GiniIndex.get_gini,
    ItemCoverage (distinct recommended / all items), AveragePopularity (training
    interactions per slot, averaged per user); sisinflab/elliot (0126926)
    evaluation/metrics/diversity/shannon_entropy (SEntropy, bits, slots weighted 1/|L_u|) and
    coverage/item_coverage (the count). Re-implemented from the published code; equal lists
    of K items, a catalog of every item, interactions as popularity."""
    rng = np.random.default_rng(11)
    items = [f"i{j}" for j in range(50)]
    users = [f"u{u}" for u in range(70)]
    preds = pd.DataFrame([(u, i, r + 1) for u in users
                          for r, i in enumerate(rng.choice(items, 8, replace=False))],
                         columns=["user_id", "item_id", "rank"])
    truth = preds.groupby("user_id").head(1).drop(columns="rank").assign(relevance=1.0)
    train = pd.DataFrame({"user_id": rng.choice(users, 400), "item_id": rng.choice(items, 400)})
    catalog = pd.DataFrame({"item_id": items})
    k = 5
    r = evaluate(preds, truth, ["gini", "coverage", "item_coverage", "entropy", "arp"], k,
                 train=train, catalog=catalog, popularity="interactions").metrics
    top = preds[preds["rank"] <= k]
    counts = np.sort(top.groupby("item_id").size().to_numpy())
    n = len(items)
    idx = np.arange(n - len(counts) + 1, n + 1)
    recbole_gini = np.sum((2 * idx - n - 1) * counts) / len(top) / n
    assert r[f"gini@{k}"] == pytest.approx(recbole_gini, abs=1e-12)
    assert r[f"coverage@{k}"] == pytest.approx(top.item_id.nunique() / n, abs=1e-15)
    assert r[f"item_coverage@{k}"] == top.item_id.nunique()  # Elliot's ItemCoverage
    interactions = train.groupby("item_id").size()
    recbole_pop = top.item_id.map(interactions).fillna(0).groupby(top.user_id).mean().mean()
    assert r[f"arp@{k}"] == pytest.approx(recbole_pop, abs=1e-12)
    weights = (1 / top.groupby("user_id").item_id.transform("size")).groupby(top.item_id).sum()
    share = top.groupby("item_id").size() / len(top)
    elliot_entropy = float((weights * -np.log2(share)).sum() / top.user_id.nunique())
    assert r[f"entropy@{k}"] == pytest.approx(elliot_entropy, abs=1e-12)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na and nb else 0.0


@settings(max_examples=40, deadline=None)
@given(runs(), st.sampled_from([2, 3, 5]), st.integers(0, 2**31))
def test_ild_and_serendipity_by_brute_force(data, k, seed):
    """Every pair of each list (ild), every (recommended, training) item pair (serendipity),
    as Microsoft Recommenders computes them (python_evaluation.py, user_diversity and
    user_item_serendipity with item feature vectors): users that cannot be scored are NaN
    and left out of the mean."""
    preds, truth, train, catalog = data
    rng = np.random.default_rng(seed)
    items = list(catalog.item_id)
    with_features = [i for i in items if rng.random() < 0.85]
    vectors = {i: rng.integers(0, 3, 4).astype(float) for i in with_features}
    feats = pd.DataFrame({"item_id": with_features,
                          **{f"f{d}": [vectors[i][d] for i in with_features] for d in range(4)}})
    r = evaluate(preds, truth, ["ild", "serendipity"], k, item_features=feats, train=train)
    table = r.per_user.set_index("user_id")
    relevant = set(zip(truth.user_id, truth.item_id, strict=True))
    history = train.drop_duplicates().groupby("user_id").item_id.apply(list).to_dict()
    ild_values, seren_values = [], []
    for user, items_u in _lists(preds, k).items():
        if user not in table.index:
            continue
        featured = [i for i in items_u if i in vectors]
        if len(featured) < 2:
            assert math.isnan(table.loc[user, f"ild@{k}"])
        else:
            sims = [_cosine(vectors[a], vectors[b])
                    for a, b in itertools.combinations(featured, 2)]
            assert table.loc[user, f"ild@{k}"] == pytest.approx(1 - np.mean(sims), abs=1e-12)
            ild_values.append(1 - np.mean(sims))
        seen = history.get(user, [])
        if not seen:
            assert math.isnan(table.loc[user, f"serendipity@{k}"])
            continue
        per_item = [((user, i) in relevant) * (1 - np.mean(
            [_cosine(vectors[i], vectors[j]) if i in vectors and j in vectors else 0.0
             for j in seen])) for i in items_u]
        assert table.loc[user, f"serendipity@{k}"] == pytest.approx(np.mean(per_item),
                                                                    abs=1e-12)
        seren_values.append(np.mean(per_item))
    if ild_values:
        assert r.metrics[f"ild@{k}"] == pytest.approx(np.mean(ild_values), abs=1e-12)
    if seren_values:
        assert r.metrics[f"serendipity@{k}"] == pytest.approx(np.mean(seren_values), abs=1e-12)


def test_item_features_from_tags_lists_and_columns(run_cli, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    preds, truth, _, _ = _example7()
    p, t = tmp_path / "p.csv", tmp_path / "t.csv"
    preds.to_csv(p, index=False)
    truth.to_csv(t, index=False)
    vec = {i: [float(j % 3 == 0), float(j % 2), 1.0] for j, i in enumerate("ABCDEFGH")}
    pq.write_table(pa.table({"item_id": list(vec), "embedding": list(vec.values())}),
                   tmp_path / "f.parquet")
    pd.DataFrame({"item_id": list(vec), **{f"f{d}": [v[d] for v in vec.values()]
                                           for d in range(3)}}).to_csv(tmp_path / "f.csv",
                                                                       index=False)
    results = [json.loads(run_cli("score", p, t, "--item-features", tmp_path / name, "-k", "3",
                                  "-m", "ild", "-f", "json").stdout)["metrics"]["ild@3"]
               for name in ("f.parquet", "f.csv")]
    assert results[0] == results[1]
    tags = tmp_path / "tags.csv"
    tags.write_text("item_id,genres\nA,x|y\nB,y\nC,x|z\nE,z\nF,\nG,y|z\n")
    r = run_cli("score", p, t, "--item-features", tags, "-k", "3", "-m", "ild", "-f", "json")
    assert r.exit_code == 0, r.stderr
    # u1: B C E -> {y} {x,z} {z}: 1 - mean(0, 0, 1/sqrt 2); u2: A E F (F no tags: a zero
    # vector, similar to nothing); u3: C E G -> {x,z} {z} {y,z}.
    u1 = 1 - (1 / math.sqrt(2)) / 3
    u2 = 1 - 0 / 3
    cz = _cosine(np.array([1.0, 0, 1]), np.array([0.0, 1, 1]))  # C {x,z} . G {y,z}
    ez = _cosine(np.array([0.0, 0, 1]), np.array([0.0, 1, 1]))  # E {z} . G {y,z}
    u3 = 1 - (1 / math.sqrt(2) + cz + ez) / 3
    assert json.loads(r.stdout)["metrics"]["ild@3"] == pytest.approx((u1 + u2 + u3) / 3,
                                                                     abs=1e-12)
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,f0\nA,1\nA,2\n")
    r = run_cli("score", p, t, "--item-features", bad, "-m", "ild@3")
    assert r.exit_code == 2 and "items listed more than once" in r.stderr
    r = run_cli("score", p, t, "-m", "serendipity@3", "--item-features", tmp_path / "f.csv")
    assert r.exit_code == 2 and "serendipity needs --train" in r.stderr


def test_users_a_metric_cannot_score_are_counted_and_left_out():
    preds = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "y", "x"],
                          "rank": [1, 2, 1]})
    truth = pd.DataFrame({"user_id": ["a", "b"], "item_id": ["x", "x"], "relevance": 1.0})
    feats = pd.DataFrame({"item_id": ["x", "y"], "f0": [1.0, 0.0], "f1": [0.0, 1.0]})
    r = evaluate(preds, truth, ["ild", "precision"], 2, item_features=feats)
    assert r.metrics["ild@2"] == 1.0  # a only; b has one item
    assert np.isnan(r.per_user.set_index("user_id").loc["b", "ild@2"])
    assert {n.code: n.count for n in r.notices}["not_scored"] == 1
    assert r.with_intervals(rounds=200).intervals["ild@2"] == (1.0, 1.0)


def test_worked_example_ild_and_serendipity():
    """By hand. Features x = (1, 0), y = (0, 1), z = (1, 1), w = (1, 1); v has none.
    User a: list x y z, training x z, y relevant. cos(x,y) = 0, cos(x,z) = cos(y,z) = 1/sqrt 2:
    ild = 1 - (0 + 2/sqrt 2)/3 = 0.5285954792089682. serendipity: y is 1 - (cos(y,x) +
    cos(y,z))/2 = 1 - 1/(2 sqrt 2) from the history, x and z are not relevant: the mean over 3
    items is (1 - 1/(2 sqrt 2))/3. User b: list x w v (v has no features: ild over x, w only =
    1 - 1/sqrt 2), training q (no features: a history of 1 item similar to nothing), w
    relevant: serendipity (1 - 0)/3."""
    preds = pd.DataFrame({"user_id": ["a"] * 3 + ["b"] * 3,
                          "item_id": ["x", "y", "z", "x", "w", "v"], "rank": [1, 2, 3] * 2})
    truth = pd.DataFrame({"user_id": ["a", "b"], "item_id": ["y", "w"], "relevance": 1.0})
    feats = pd.DataFrame({"item_id": ["x", "y", "z", "w"], "f0": [1, 0, 1, 1],
                          "f1": [0, 1, 1, 1]})
    train = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "z", "q"]})
    r = evaluate(preds, truth, ["ild", "serendipity"], 3, item_features=feats, train=train)
    table = r.per_user.set_index("user_id")
    root2 = math.sqrt(2)
    assert table.loc["a", "ild@3"] == pytest.approx(1 - (2 / root2) / 3, abs=1e-15)
    assert table.loc["b", "ild@3"] == pytest.approx(1 - 1 / root2, abs=1e-15)
    assert table.loc["a", "serendipity@3"] == pytest.approx((1 - 1 / (2 * root2)) / 3,
                                                            abs=1e-15)
    assert table.loc["b", "serendipity@3"] == pytest.approx(1 / 3, abs=1e-15)


def test_validate_reads_and_checks_the_extra_inputs(run_cli, tmp_path):
    s = "sample_data/"
    ok = run_cli("validate", s + "preds.csv", s + "truth.csv", "--train", s + "train.csv",
                 "--catalog", s + "catalog.csv", "-m", "coverage@10,arp@10", "-f", "json")
    assert ok.exit_code == 0, ok.stderr
    inputs = json.loads(ok.stdout)["inputs"]
    assert inputs["train"]["rows"] == 5178 and inputs["catalog"]["rows"] == 400
    bad = tmp_path / "train.csv"
    bad.write_text("user_id,item_id,count\nu001,i0001,-2\n")
    r = run_cli("validate", s + "preds.csv", s + "truth.csv", "--train", bad, "-m", "arp@10")
    assert r.exit_code == 2 and "counts below 0" in r.stdout + r.stderr


def test_one_input_at_most_from_standard_input(run_cli):
    s = "sample_data/"
    for args in (["-", "-"], [s + "preds.csv", "-", "--train", "-"]):
        r = run_cli("score", *args, "--truth-format", "csv", "--preds-format", "csv")
        assert r.exit_code == 2
        assert "a stream that can be read only once" in r.stderr
