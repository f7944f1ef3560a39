"""Tie-aware scoring (SPEC section 8): --ties expected equals the mean over every order of the
tied items, enumerated by brute force; optimistic and pessimistic are the best and worst of
those orders; scikit-learn's NDCG and the tie-aware-retrieval-metrics package agree."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import trm
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from rankeval import evaluate
from rankeval.build.ordering import sort_order
from rankeval.errors import OptionError
from rankeval.io.arrow import to_numpy
from rankeval.kernels.chunk import Chunk, count_before, count_before_at
from rankeval.registry import PER_USER, REGISTRY

EXPECTABLE = [name for name, m in REGISTRY.items() if m.tie_expectation and not m.needs]
KS = [1, 2, 3, 5]


def _example8():
    preds = pd.DataFrame({"user_id": "u", "item_id": list("ABCDE"),
                          "score": [0.9, 0.5, 0.5, 0.5, 0.1]})
    truth = pd.DataFrame({"user_id": "u", "item_id": list("CDE"), "relevance": [1, 2, 1]})
    return preds, truth


@pytest.mark.parametrize(("ties", "expected"), [
    ("expected", [1 / 3, 1 / 3, 0.23981246656813146, 1 / 6]),
    ("optimistic", [0.5, 0.5, 0.4796249331362629, 0.25]),
    ("pessimistic", [0.0, 0.0, 0.0, 0.0]),
])
def test_spec_worked_example_8(ties, expected):
    names = ["precision@2", "mrr@2", "ndcg@2", "map@2"]
    got = evaluate(*_example8(), names, ties=ties).metrics
    assert [got[n] for n in names] == pytest.approx(expected, abs=1e-12)


def _orders(preds: pd.DataFrame) -> pd.DataFrame:
    """Every order of every user's tie groups, each as a user ``u#n`` with ranks."""
    rows = []
    for user, frame in preds.groupby("user_id", sort=False):
        frame = frame.sort_values(["score", "item_id"], ascending=[False, False])
        groups = [list(g.item_id) for _, g in frame.groupby("score", sort=False)]
        for n, parts in enumerate(itertools.product(*map(itertools.permutations, groups))):
            items = [i for part in parts for i in part]
            rows += [(f"{user}#{n}", item, r) for r, item in enumerate(items, 1)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "rank"])


def _expand_truth(truth: pd.DataFrame, orders: pd.DataFrame) -> pd.DataFrame:
    ids = pd.DataFrame({"user_id": orders.user_id.unique()})
    ids["base"] = ids.user_id.str.split("#").str[0]
    return ids.merge(truth.rename(columns={"user_id": "base"}), on="base").drop(columns="base")


def _brute_force(preds, truth, names, ks, **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per user: the mean, min and max of every metric over all orders of its tie groups."""
    orders = _orders(preds)
    every = evaluate(orders, _expand_truth(truth, orders), names, ks, ties="input",
                     **options).per_user
    every["user_id"] = every.user_id.str.split("#").str[0]
    grouped = every.groupby("user_id")
    return grouped.mean(), grouped.min(), grouped.max()


@st.composite
def tied_runs(draw):
    """Users with lists of up to 9 items over a few score levels (tie groups of up to 5) and
    graded truth with judged zeros, unjudged pool entries (-1) and relevant items not listed."""
    preds, truth = [], []
    for u in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 9))
        levels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        assume_small = [levels.count(v) for v in set(levels)]
        if math.prod(math.factorial(c) for c in assume_small) > 3000:
            levels = list(range(n))  # keep the enumeration small
        preds += [(f"u{u}", f"i{j}", float(s)) for j, s in enumerate(levels)]
        pool = [f"i{j}" for j in range(n + 3)]
        judged = draw(st.lists(st.sampled_from(pool), unique=True, min_size=1, max_size=8))
        grades = draw(st.lists(st.sampled_from([-1, 0, 1, 2, 3]), min_size=len(judged),
                               max_size=len(judged)))
        grades[0] = max(grades[0], 1)  # every user has a relevant item
        truth += [(f"u{u}", i, float(g)) for i, g in zip(judged, grades, strict=True)]
    return (pd.DataFrame(preds, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


OPTIONS = st.fixed_dictionaries({
    "gain": st.sampled_from(["linear", "exponential"]),
    "ap_denominator": st.sampled_from(["min", "relevant"]),
    "rr_target": st.sampled_from(["first-relevant", "most-relevant"]),
    "relevance_threshold": st.sampled_from([None, 2.0]),
    "rbp_p": st.sampled_from([0.5, 0.8]),
})


@settings(max_examples=60, deadline=None)
@given(tied_runs(), OPTIONS)
def test_expected_equals_the_mean_over_every_order(data, options):
    preds, truth = data
    names = [*EXPECTABLE, "precision@all", "ndcg@all", "map@all", "mrr@all"]
    if options["relevance_threshold"] and not (truth.relevance >= 2).any():
        options = {**options, "relevance_threshold": None}
    mean, low, high = _brute_force(preds, truth, names, KS, **options)
    ours = evaluate(preds, truth, names, KS, ties="expected", **options).per_user
    ours = ours.set_index("user_id").loc[mean.index]
    np.testing.assert_allclose(ours.to_numpy(), mean[ours.columns].to_numpy(), rtol=0,
                               atol=1e-12)
    for ties, bound in (("optimistic", high), ("pessimistic", low)):
        side = evaluate(preds, truth, names, KS, ties=ties, **options).per_user
        side = side.set_index("user_id").loc[mean.index]
        # Relevant items first (last) is the best (worst) order for the measures of hits
        # and gains; bpref, judged and the residual also depend on which items are judged.
        for col in side.columns:
            if col.split("@")[0] in ("precision", "recall", "f1", "hit_rate", "dcg", "ndcg",
                                     "cg", "r_precision", "rbp"):
                np.testing.assert_allclose(side[col], bound[col], rtol=0, atol=1e-12,
                                           err_msg=f"{ties} {col}")


def test_a_group_of_eight_tied_items():
    """One group of 8 across every K (8! = 40,320 orders), graded, with hits before it."""
    items = list("abcdefghij")
    preds = pd.DataFrame({"user_id": "u", "item_id": items,
                          "score": [9.0, 8.0] + [5.0] * 8})
    truth = pd.DataFrame({"user_id": "u", "item_id": ["b", "c", "e", "f", "j", "z"],
                          "relevance": [1.0, 3.0, 0.0, 2.0, 1.0, 2.0]})
    names = ["precision", "recall", "hit_rate", "mrr", "map", "ndcg", "bpref", "rbp",
             "r_precision", "judged"]
    mean, _, _ = _brute_force(preds, truth, names, [1, 3, 4, 7, 10])
    ours = evaluate(preds, truth, names, [1, 3, 4, 7, 10], ties="expected").per_user
    got = ours.set_index("user_id").loc[mean.index]
    np.testing.assert_allclose(got.to_numpy(), mean[got.columns].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_binary_measures_match_tie_aware_retrieval_metrics(seed):
    """trm (Yang et al., ACL 2026): binary relevance, every relevant item among the
    candidates; its AP divides by R (--ap-denominator relevant)."""
    rng = np.random.default_rng(seed)
    scores, labels, rows, truth = [], [], [], []
    for q in range(40):
        n = int(rng.integers(3, 20))
        s = rng.integers(0, 4, n).astype(float)  # heavy ties
        rel = rng.random(n) < 0.3
        rel[0] = True
        scores.append(s.tolist())
        labels.append(rel.tolist())
        rows += [(f"q{q}", f"d{j}", s[j]) for j in range(n)]
        truth += [(f"q{q}", f"d{j}", 1.0) for j in range(n) if rel[j]]
    ks = [1, 3, 5, 10]
    theirs = trm.evaluate(scores, labels, ["ndcg", "mrr", "map", "recall", "precision", "f1"],
                          ks)
    preds = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    gold = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    names = {"ndcg": "ndcg", "mrr": "mrr", "map": "map", "recall": "recall",
             "precision": "precision", "f1": "f1"}
    ours = evaluate(preds, gold, list(names.values()), ks, ties="expected",
                    ap_denominator="relevant")
    for theirs_name, ours_name in names.items():
        for k in ks:
            assert ours.metrics[f"{ours_name}@{k}"] == pytest.approx(
                theirs.metrics[theirs_name][k].expected, abs=1e-12), (theirs_name, k)


@pytest.mark.parametrize("seed", [4, 5])
def test_graded_ndcg_matches_scikit_learn_which_averages_ties(seed):
    rng = np.random.default_rng(seed)
    n_users, n_items, k = 30, 12, 6
    grades = rng.integers(0, 4, (n_users, n_items)).astype(float)
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    scores = rng.integers(0, 3, (n_users, n_items)).astype(float)
    preds = pd.DataFrame([(f"u{u}", f"i{i}", scores[u, i]) for u in range(n_users)
                          for i in range(n_items)], columns=["user_id", "item_id", "score"])
    truth = pd.DataFrame([(f"u{u}", f"i{i}", grades[u, i]) for u in range(n_users)
                          for i in range(n_items) if grades[u, i] > 0],
                         columns=["user_id", "item_id", "relevance"])
    ours = evaluate(preds, truth, [f"ndcg@{k}"], ties="expected").per_user
    for u in range(n_users):
        theirs = ndcg_score(grades[u:u + 1], scores[u:u + 1], k=k, ignore_ties=False)
        assert ours.set_index("user_id").loc[f"u{u}", f"ndcg@{k}"] == pytest.approx(
            theirs, abs=1e-12)


def test_expected_refuses_measures_without_a_closed_form(run_cli, write):
    with pytest.raises(OptionError, match="no closed form for err, gm_map"):
        evaluate(*_example8(), ["err@5", "gm_map@5", "ndcg@5"], ties="expected")
    preds = write("p.csv", "user_id,item_id,score\nu,a,1\nu,b,1\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu,a,1\n")
    r = run_cli("score", preds, truth, "-m", "iprec", "--ties", "expected")
    assert r.exit_code == 2
    assert r.stderr.strip().startswith("rankeval: error: --ties expected has no closed form "
                                       "for iprec")
    ok = run_cli("score", preds, truth, "-m", "iprec@0.5", "--ties", "optimistic", "-f", "json")
    assert ok.exit_code == 0 and '"iprec@0.5": 1.0' in ok.stdout


def test_lists_ending_in_a_tie_are_counted():
    preds = pd.DataFrame({"user_id": ["a", "a", "a", "b", "b", "c", "c"],
                          "item_id": ["x", "y", "z", "x", "y", "x", "y"],
                          "score": [3.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0]})
    truth = pd.DataFrame({"user_id": ["a", "b", "c"], "item_id": "y", "relevance": 1.0})
    r = evaluate(preds, truth, ["ndcg@10"], ties="expected")
    assert [n.count for n in r.notices if n.code == "ties_at_list_end"] == [2]  # a and c
    shallow = evaluate(preds, truth, ["ndcg@1"], ties="expected")  # a's tie starts past K
    assert [n.count for n in shallow.notices if n.code == "ties_at_list_end"] == [1]
    plain = evaluate(preds, truth, ["ndcg@10"])
    assert not [n for n in plain.notices if n.code == "ties_at_list_end"]


def test_every_report_shows_the_tie_sensitivity(run_cli, write, tmp_path):
    preds, truth = _example8()
    p, t = write("p.csv", preds.to_csv(index=False)), write("t.csv", truth.to_csv(index=False))
    table = run_cli("score", p, t, "-m", "ndcg@2,map@2", "--ties", "expected")
    assert table.exit_code == 0, table.stderr
    assert "ndcg@2       0.0000    0.2398      0.4796" in table.stdout
    assert "tie sensitivity: 1 user has tied scores; reported: the expected value" in table.stdout
    md = run_cli("score", p, t, "-m", "ndcg@2", "-f", "markdown")
    assert "| ndcg@2 | 0.0000 | 0.4796 | 0.4796 |" in md.stdout  # trec's order is the best here
    doc = json.loads(run_cli("score", p, t, "-m", "ndcg@2", "--ties", "pessimistic",
                             "-f", "json").stdout)
    assert doc["metrics"]["ndcg@2"] == 0.0
    assert doc["ties"] == {"users": 1, "range": {"ndcg@2": {
        "pessimistic": 0.0, "optimistic": 0.4796249331362629}}}
    untied = preds.assign(score=[5.0, 4.0, 3.0, 2.0, 1.0])
    u = write("u.csv", untied.to_csv(index=False))
    clean = json.loads(run_cli("score", u, t, "-m", "ndcg@2", "-f", "json").stdout)
    assert clean["ties"] is None
    assert "tie sensitivity" not in run_cli("score", u, t, "-m", "ndcg@2").stdout
    # The range merges across partitions like every mean.
    r = evaluate(pd.concat([preds, preds.assign(user_id="v")]),
                 pd.concat([truth, truth.assign(user_id="v")]), ["ndcg@2"], ties="expected")
    assert r.tied_users == 2 and r.tie_range["ndcg@2"] == pytest.approx((0, 0.4796249331362629))


@pytest.mark.parametrize(("ties", "why"), [
    ("expected", "scores ties fairly"), ("optimistic", "scores ties fairly"),
    ("pessimistic", "scores ties fairly"), ("provider", "orders each metric's lists its own way")])
def test_convert_writes_one_order_only(run_cli, write, tmp_path, ties, why):
    """A converted file holds one order: the command offers only those rules (its --help
    lists no other), and the library says why another one cannot be written."""
    from rankeval.api.convert import convert
    from rankeval.errors import OptionError

    preds = write("p.csv", "user_id,item_id,score\nu,a,1\nu,b,1\n")
    r = run_cli("convert", preds, str(tmp_path / "o.trec"), "--ties", ties)
    assert r.exit_code == 2
    assert "'trec', 'item-asc', 'input'" in r.stderr and len(r.stderr.splitlines()) == 1
    with pytest.raises(OptionError, match=f"{ties} {why} when evaluating"):
        convert(str(preds), str(tmp_path / "o.trec"), ties=ties)
    assert not (tmp_path / "o.trec").exists()


def test_one_list_for_every_metric_under_a_rule_per_metric_takes_the_shared_rule():
    """Under ``provider`` a metric without a rule of its own (mrr@all: pytrec_eval's, trec)
    is scored on the evaluation's own lists, ordered by the shared rule; mrr@1 (msmarco's)
    on a build of its own, by item id ascending."""
    preds = pd.DataFrame({"user_id": ["u"] * 4, "item_id": ["a", "c", "b", "d"],
                          "score": [1.0, 1.0, 1.0, 0.5]})
    truth = pd.DataFrame({"user_id": ["u", "u"], "item_id": ["c", "d"], "relevance": [1, 1]})
    each = evaluate(preds, truth, ["mrr@all", "mrr@1"], ties="provider")
    assert each.settings.tie_rules == (("mrr@all", "trec"), ("mrr@1", "item-asc"))
    assert each.metrics == {"mrr@all": 1.0, "mrr@1": 0.0}  # c b a d; a c b d


def test_readme_tied_average_precision():
    """The README's worked example: expected, optimistic, pessimistic and trec AP@3."""
    got = {ties: evaluate(*_example8(), ["map@3"], ties=ties).metrics["map@3"]
           for ties in ("expected", "optimistic", "pessimistic", "trec")}
    assert got == pytest.approx({"expected": 2 / 9, "optimistic": (1 / 2 + 2 / 3) / 3,
                                 "pessimistic": (1 / 3) / 3, "trec": (1 / 2 + 2 / 3) / 3},
                                abs=1e-15)


# Every per-user metric that reads nothing beyond the run and the truth, at a cut-off where
# it takes one, and one with its own build (a relevance threshold of its own)
TIE_SENSITIVE = [f"{name}@{m.levels[len(m.levels) // 2]}" if m.levels else
                 f"{name}@5" if m.cutoff else name
                 for name, m in REGISTRY.items() if not m.needs and m.scope == PER_USER
                 ] + ["precision(rel=2)@5"]


@pytest.mark.parametrize("seed", range(3))
def test_tie_sensitivity_is_the_pessimistic_and_optimistic_means(seed):
    """The range each mean can take with the order of tied items alone (recomputed for the
    users with ties only) equals the means under ``--ties pessimistic`` and ``optimistic``,
    computed over every user by the build's own reordering."""
    rng = np.random.default_rng(seed)
    users = np.repeat([f"u{u}" for u in range(300)], 12)
    preds = pd.DataFrame({"user_id": users,
                          "item_id": [f"d{i}" for i in rng.integers(0, 60, len(users))],
                          "score": rng.integers(0, 6, len(users)).astype(float)})
    preds = preds.drop_duplicates(["user_id", "item_id"])
    # most users' scores distinct: ties in a few lists only, as in most runs
    untied = preds.user_id.isin([f"u{u}" for u in range(0, 300, 3)])
    preds.loc[~untied, "score"] = np.arange(int((~untied).sum()), dtype=float)
    truth = preds.sample(frac=0.5, random_state=seed)[["user_id", "item_id"]].assign(
        relevance=lambda d: rng.integers(0, 4, len(d)))
    ev = evaluate(preds, truth, metrics=TIE_SENSITIVE)
    low, high = (evaluate(preds, truth, metrics=TIE_SENSITIVE, ties=t)
                 for t in ("pessimistic", "optimistic"))
    assert 0 < ev.tied_users < ev.users.evaluated
    assert set(ev.tie_range) == set(ev.metrics)
    for name, (a, b) in ev.tie_range.items():
        assert (a, b) == pytest.approx((low.metrics[name], high.metrics[name]), abs=1e-12,
                                       nan_ok=True), name


@pytest.mark.parametrize("best_first", [False, True])
def test_reordering_only_the_tie_groups_equals_sorting_every_row(best_first):
    rng = np.random.default_rng(5)
    n_users, per = 200, 15
    user = np.repeat(np.arange(n_users, dtype=np.int32), per)
    pos = np.tile(np.arange(1, per + 1), n_users)
    score = rng.integers(0, 8, len(user))
    score[user % 2 == 0] = -pos[user % 2 == 0]  # half the users without ties
    score = -np.sort(-score.reshape(n_users, per), axis=1).ravel()
    first = np.ones(len(user), dtype=bool)
    first[1:] = (score[1:] != score[:-1]) | (user[1:] != user[:-1])
    tie_start = pos[np.maximum.accumulate(np.where(first, np.arange(len(user)), 0))]
    empty = np.zeros(0)
    chunk = Chunk(n_users=n_users, user=user, pos=pos,
                  item=np.arange(len(user), dtype=np.int32),
                  rel=rng.integers(0, 4, len(user)).astype(float),
                  ideal_user=empty.astype(np.int32),
                  ideal_pos=empty, ideal_rel=empty, n_relevant=np.zeros(n_users),
                  max_relevance=np.zeros(n_users), tie_start=tie_start)
    rel = -chunk.rel if best_first else chunk.rel
    order = np.lexsort((rel, tie_start, user))
    got = chunk.reordered(best_first=best_first)
    assert (got.item == chunk.item[order]).all() and (got.rel == chunk.rel[order]).all()
    assert not (got.item == chunk.item).all()


@pytest.mark.parametrize("seed", range(4))
def test_count_before_at_rows_equals_a_walk_down_each_list(seed):
    rng = np.random.default_rng(seed)
    user = np.sort(rng.integers(0, 40, 600)).astype(np.int32)
    flags = rng.random(600) < 0.3
    rows = np.flatnonzero(rng.random(600) < 0.5)
    walked = [int(flags[:r][user[:r] == user[r]].sum()) for r in rows]  # brute force
    assert count_before_at(user, flags, rows).tolist() == walked
    assert count_before(user, flags)[rows].tolist() == walked


@pytest.mark.parametrize("seed", range(3))
def test_every_order_of_rows_is_arrows_stable_sort(seed):
    """sort_order's three ways (in order already; users each in one run in another order;
    anything else) give Arrow's stable sort by (user, then the list's own key): runs of one
    user in order within, runs out of order within, a user in two runs, shuffled rows."""
    rng = np.random.default_rng(seed)
    for case in range(200):
        n_users = int(rng.integers(1, 30))
        lengths = rng.integers(1, 6, n_users)
        user = np.repeat(rng.permutation(n_users * 3)[:n_users], lengths).astype(np.int32)
        rank = np.concatenate([np.sort(rng.integers(0, 4, n)) if rng.random() < 0.8
                               else rng.integers(0, 4, n) for n in lengths])
        if case % 5 == 0:
            user = rng.permutation(user)
        if case % 7 == 0:
            user = np.sort(user)
        for descending in (False, True):
            arrow = to_numpy(pc.sort_indices(
                pa.table({"u": user, "r": rank}),
                sort_keys=[("u", "ascending"), ("r", "descending" if descending else "ascending")]))
            got = sort_order([(user, False), (rank, descending)])
            assert (np.arange(len(user)) if got is None else got).tolist() == arrow.tolist()


@pytest.mark.parametrize("kinds", [3, 1])  # 1: every list's scores fall strictly
@pytest.mark.parametrize("order_by", ["rank", "score"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tied_users_are_found_whichever_column_orders_the_lists(order_by, seed, kinds):
    """Lists whose scores fall strictly need no search for ties (the order's checks saw it);
    the others are searched. Against pandas: the users with two neighbours of one score in
    list order, over runs with ranks and scores where a third of the users' scores fall
    strictly, a third tie and a third rise, at a depth every list reaches (the users
    evaluated: those with judgments)."""
    rng = np.random.default_rng(seed)
    n_users, per = 90, 8
    user = np.repeat([f"u{u:02d}" for u in range(n_users)], per)
    rank = np.tile(np.arange(1, per + 1), n_users)
    kind = np.repeat(np.arange(n_users) % kinds, per)
    score = np.where(kind == 0, 100.0 - rank, np.where(
        kind == 1, rng.integers(0, 3, len(user)).astype(float), rng.random(len(user))))
    preds = pd.DataFrame({"user_id": user, "item_id": [f"d{i}" for i in range(len(user))],
                          "rank": rank, "score": score})
    truth = preds.sample(frac=0.4, random_state=seed)[["user_id", "item_id"]].assign(
        relevance=1)
    ev = evaluate(preds, truth, metrics=["precision"], k=per, order_by=order_by)
    by_rank = order_by == "rank"
    listed = preds[preds.user_id.isin(truth.user_id)].sort_values(
        ["user_id", "rank"] if by_rank else ["user_id", "score", "item_id"],
        ascending=[True, True] if by_rank else [True, False, False])
    same = (listed.user_id.values[1:] == listed.user_id.values[:-1]) & (
        listed.score.values[1:] == listed.score.values[:-1])
    expected = len(set(listed.user_id.values[1:][same]))
    assert ev.tied_users == expected
    assert (0 < expected < n_users) if kinds == 3 else expected == 0


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4), st.integers(0, 3)),
                min_size=2, max_size=60), st.sampled_from(["drawn", "runs", "sorted"]))
def test_the_file_order_check_of_ranks_equals_the_gathered_one(rows, layout):
    """``ranks_differ_from_scores`` reads the file's own neighbours when the rank order keeps
    each user's rows as the file has them (``in_runs``), else the rows gathered in rank
    order: both give one answer, on files as drawn, in users' runs out of user order (each
    run by rank), and sorted; tied, rising and repeated ranks among them."""
    from rankeval.build.ordering import in_runs, ranks_differ_from_scores, sort_order

    if layout != "drawn":  # each user's rows together, by rank; users in first-seen order
        first = {u: i for i, (u, _, _) in reversed(list(enumerate(rows)))}
        rows = sorted(rows, key=lambda t: (t[0] if layout == "sorted" else first[t[0]], t[1]))
    user = np.array([u for u, _, _ in rows])
    rank = np.array([r for _, r, _ in rows])
    score = np.array([float(s) for _, _, s in rows])
    order = sort_order([(user, False), (rank, False)])
    su = user if order is None else user[order]
    gathered = ranks_differ_from_scores(rank, score, order, su)
    if in_runs(order, su):
        assert ranks_differ_from_scores(rank, score, order, su, user) == gathered
    else:
        assert layout == "drawn"
