"""trec_eval's, ir_measures' and ranx's other measures against those tools on generated data.

bpref, gm_map, iprec_at_recall and Rprec_mult (with -J and -M) against pytrec_eval; RBP and
the Burges DCG against ranx; ERR@K against ir_measures (gdeval) and Chapelle et al.'s formula;
Judged@K against ir_measures; RBP's residual against Moffat and Zobel's definition.
"""

from __future__ import annotations

import json
import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import ranx

from rankeval import evaluate

from .datagen import as_dicts, generate

# ranx compiles its numba kernels on first use (a minute on a machine without the cache): the
# tests that call it share one worker (make test's --dist loadgroup), which compiles them once.
pytestmark = pytest.mark.xdist_group("ranx")

TREC = {"bpref": "bpref", "gm_map": "gm_map@all", "iprec_at_recall": "iprec",
        "Rprec_mult": "r_precision_mult"}


def _with_unjudged_pool(truth: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Some truth rows at -1: in the pool but not judged, as trec_eval reads a negative grade."""
    rng = np.random.default_rng(seed)
    rel = truth.relevance.to_numpy().copy()
    rel[rng.random(len(rel)) < 0.1] = -1
    return truth.assign(relevance=rel)


def _trec_order(preds: pd.DataFrame) -> pd.DataFrame:
    """trec_eval's list order: score descending, then item id descending."""
    return preds.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])


def _compare(ours: pd.DataFrame, theirs: dict, names: dict[str, str]) -> int:
    """Every per-user value pytrec_eval gives equals ours to 1e-12; returns how many."""
    n = 0
    for user, values in theirs.items():
        for trec_name, value in values.items():
            mine = next(ours_name for t, ours_name in names.items() if trec_name.startswith(t))
            column = mine if trec_name in names else _level_column(trec_name, mine)
            if math.isnan(value):  # trec_eval's 0/0 on an empty condensed list: undefined
                assert math.isnan(ours.loc[user, column]), (user, trec_name)
                continue
            assert ours.loc[user, column] == pytest.approx(value, abs=1e-12), (user, trec_name)
            n += 1
    return n


def _level_column(trec_name: str, ours: str) -> str:
    level = float(trec_name.rsplit("_", 1)[1])
    return f"{ours}@{level:g}" if f"{level:g}" != str(int(level)) else f"{ours}@{int(level)}.0"


@pytest.mark.parametrize("judged_only", [False, True], ids=["all", "judged-only"])
@pytest.mark.parametrize("seed", [31, 32, 33])
def test_trec_measures_match_pytrec_eval(tmp_path, seed, judged_only):
    preds, truth = generate(seed, 90, 140, 30, 14)
    truth = _with_unjudged_pool(truth, seed)
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, set(TREC), judged_docs_only_flag=judged_only).evaluate(run)
    ours = evaluate(preds, truth, list(TREC), compat="trec_eval-9", judged_only=judged_only,
                    skip_missing_users=False)  # pytrec_eval is 9.0.8; -c
    table = ours.per_user.set_index("user_id")
    assert _compare(table, theirs, TREC) >= 70 * 23
    # trec_eval -c: users without predictions score 0 (gm_map: the log of the floor).
    missing = sorted(set(table.index) - set(theirs))
    assert missing
    assert (table.loc[missing, "bpref"] == 0).all()
    assert (table.loc[missing, "gm_map@all"] == math.log(1e-5)).all()
    # gm_map overall: exp of the mean log, as trec_eval's "all" line.
    logs = table["gm_map@all"].to_numpy()
    assert ours.metrics["gm_map@all"] == pytest.approx(math.exp(logs.mean()), rel=1e-14)
    assert ours.metrics["gm_map@all"] < table["gm_map@all"].map(math.exp).mean()


@pytest.mark.parametrize("depth", [1, 7, 20])
def test_max_depth_is_trec_eval_M(depth):
    """-M N: only the first N items (in trec_eval's order) of each list count."""
    preds, truth = generate(41, 60, 100, 25, 12)
    truth = _with_unjudged_pool(truth, 41)
    top = _trec_order(preds).groupby("user_id").head(depth)
    qrels, run = as_dicts(top, truth)
    names = {"bpref": "bpref", "map": "map@all", "num_ret": "num_ret", "P_5": "precision@5",
             "recip_rank": "mrr@all", "iprec_at_recall": "iprec"}
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"bpref", "map", "num_ret", "P.5", "recip_rank", "iprec_at_recall"}
    ).evaluate(run)
    ours = evaluate(preds, truth, ["bpref", "map", "num_ret", "P_5", "recip_rank",
                                   "iprec_at_recall"], compat="trec_eval-9", max_depth=depth,
                    skip_missing_users=False)
    table = ours.per_user.set_index("user_id")
    assert table["num_ret"].max() == depth
    assert _compare(table, theirs, names) >= 50 * 16


def test_judged_only_condenses_before_the_cut():
    """-J drops unjudged items first, so judged ones move up into the top K."""
    preds = pd.DataFrame({"user_id": "q", "item_id": list("abcde"), "rank": range(1, 6)})
    truth = pd.DataFrame({"user_id": "q", "item_id": ["b", "d", "e"], "relevance": [0, 1, 1]})
    full = evaluate(preds, truth, ["precision@2", "judged@2", "num_ret"])
    condensed = evaluate(preds, truth, ["precision@2", "judged@2", "num_ret"], judged_only=True)
    assert full.metrics == {"precision@2": 0.0, "judged@2": 0.5, "num_ret": 5}
    assert condensed.metrics == {"precision@2": 0.5, "judged@2": 1.0, "num_ret": 3}
    assert condensed.settings.judged_only and "judged items only" in repr(condensed)


@pytest.mark.parametrize("seed", [51, 52])
@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbp_matches_ranx_and_the_residual_its_definition(seed, p):
    preds, truth = generate(seed, 70, 120, 30, 12)
    truth = truth.assign(relevance=(truth.relevance >= 1).astype(float))  # RBP is binary
    qrels, run = as_dicts(preds, truth)
    users = sorted({u for u, q in qrels.items() if any(v > 0 for v in q.values())})
    scores = ranx.evaluate(ranx.Qrels.from_dict({u: qrels[u] for u in users}),
                           ranx.Run.from_dict(run), f"rbp.{round(p * 100)}",
                           make_comparable=True, return_mean=False)
    ours = evaluate(preds, truth, ["rbp", "rbp_residual"], rbp_p=p)
    table = ours.per_user.set_index("user_id")
    assert list(table.index) == users
    np.testing.assert_allclose(table["rbp"].to_numpy(), scores, rtol=0, atol=1e-12)
    # Moffat and Zobel (2008), section 4: the residual is what unjudged items in the list and
    # everything past its end could add: (1 - p) sum_{unjudged i} p^(i-1) + p^n.
    for user in users:
        ranked = [i for i, _ in sorted(run.get(user, {}).items(), key=lambda x: -x[1])]
        judged = qrels[user]
        expected = sum((1 - p) * p ** j for j, item in enumerate(ranked) if item not in judged)
        expected += p ** len(ranked)
        assert table.loc[user, "rbp_residual"] == pytest.approx(expected, abs=1e-12), user
    assert ours.metrics["rbp"] + ours.metrics["rbp_residual"] <= 1 + 1e-12


def _err_by_hand(grades: list[float], k: int, top: float) -> float:
    """Chapelle, Metzler, Zhang and Grinspan (CIKM 2009), algorithm 2."""
    err, p = 0.0, 1.0
    for r, g in enumerate(grades[:k], 1):
        stop = (2 ** max(g, 0) - 1) / 2 ** top
        err += p * stop / r
        p *= 1 - stop
    return err


@pytest.mark.parametrize("seed", [61, 62])
def test_err_matches_gdeval_and_its_definition(seed):
    preds, truth = generate(seed, 60, 100, 25, 14, grades=5)
    # gdeval reads numeric topics only.
    preds, truth = (f.assign(user_id=f.user_id.str[1:]) for f in (preds, truth))
    qrels, run = as_dicts(preds, truth)
    ks = [1, 5, 20]
    theirs = {(str(m), q.query_id): q.value for m, q in
              ((q.measure, q) for q in ir_measures.iter_calc(
                  [ir_measures.ERR @ k for k in ks], qrels, run))}
    ours = evaluate(preds, truth, "err", ks)
    table = ours.per_user.set_index("user_id")
    checked = 0
    for (measure, user), value in theirs.items():
        if user not in table.index:  # gdeval scores users without relevant items too
            continue
        k = int(measure.split("@")[1])
        assert table.loc[user, f"err@{k}"] == pytest.approx(value, abs=5e-6 + 1e-12)  # %.5f
        checked += 1
    assert checked >= 3 * 50
    for user in table.index:
        ranked = sorted(run.get(user, {}).items(), key=lambda x: -x[1])
        grades = [qrels[user].get(i, 0) for i, _ in ranked]
        for k in ks:
            assert table.loc[user, f"err@{k}"] == pytest.approx(
                _err_by_hand(grades, k, 4), abs=1e-15), (user, k)


def test_err_refuses_grades_above_its_highest(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nq,a,1\n")
    truth = write("t.csv", "user_id,item_id,relevance\nq,a,5\nq,b,2\n")
    r = run_cli("score", preds, truth, "-m", "err@5")
    assert r.exit_code == 2
    assert r.stderr.strip() == (f"rankeval: error: {truth}: column 'relevance': 1 relevance "
                                "value above ERR's highest grade 4, e.g. row 1 (5) (raise "
                                "--err-max-grade)")
    ok = run_cli("score", preds, truth, "-m", "err@5", "--err-max-grade", "5", "-f", "json")
    assert ok.exit_code == 0, ok.stderr
    assert '"err@5": 0.96875' in ok.stdout  # (2^5 - 1) / 2^5
    assert run_cli("score", preds, truth, "-m", "ndcg@5").exit_code == 0  # only ERR cares


@pytest.mark.parametrize("seed", [71, 72])
def test_judged_at_k_matches_ir_measures(seed):
    preds, truth = generate(seed, 60, 100, 12, 10)  # lists of 12: K = 20 is past their end
    qrels, run = as_dicts(preds, truth)
    ks = [1, 5, 10, 20]
    theirs = list(ir_measures.iter_calc([ir_measures.Judged @ k for k in ks], qrels, run))
    table = evaluate(preds, truth, "judged", ks).per_user.set_index("user_id")
    # ir_measures scores every judged user; rankeval only those with a relevant item.
    relevant = set(truth[truth.relevance > 0].user_id)
    theirs = [m for m in theirs if m.query_id in relevant]
    for m in theirs:
        assert table.loc[m.query_id, f"judged@{m.measure['cutoff']}"] == pytest.approx(
            m.value, abs=1e-12)
    assert len(theirs) >= 4 * 45


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_burges_dcg_matches_ranx_whatever_the_gain(gain):
    preds, truth = generate(81, 50, 80, 20, 10)
    qrels, run = as_dicts(preds, truth)
    users = sorted({u for u, q in qrels.items() if any(v > 0 for v in q.values())})
    metrics = ["ndcg_burges@5", "dcg_burges@10", "ndcg_burges@10"]
    theirs = ranx.evaluate(ranx.Qrels.from_dict({u: qrels[u] for u in users}),
                           ranx.Run.from_dict(run), metrics, make_comparable=True,
                           return_mean=False)
    table = evaluate(preds, truth, metrics, gain=gain).per_user.set_index("user_id")
    for m in metrics:
        np.testing.assert_allclose(table[m].to_numpy(), theirs[m], rtol=1e-13, atol=1e-15)


def test_level_names_and_compat_names(run_cli, write):
    run = write("a.run", "q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d3 3 1.0 t\n")
    qrels = write("a.qrels", "q1 0 d1 0\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 1\n")
    r = run_cli("score", run, qrels, "--compat", "trec_eval", "-f", "trec", "-m",
                "iprec_at_recall.0.5,1", "-m", "Rprec_mult_2.00", "-m", "bpref")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == [  # trec_eval's order, whatever the order of -m
        f"{'bpref':<22}\tall\t0.3333",  # (1 + (1 - 1/1)) / 3
        f"{'iprec_at_recall_0.50':<22}\tall\t0.6667",
        f"{'iprec_at_recall_1.00':<22}\tall\t0.0000",
        f"{'Rprec_mult_2.00':<22}\tall\t0.3333",
    ]
    r = run_cli("score", run, qrels, "-m", "iprec@0.5,iprec@0.55", "-f", "json")
    assert '"iprec@0.5": 0.6666666666666666' in r.stdout and '"iprec@0.55"' in r.stdout
    curve = json.loads(r.stdout)["curves"]["iprec"]  # the precision-recall curve
    assert curve == {"level": [0.5, 0.55], "value": [2 / 3, 2 / 3]}
    bad = run_cli("score", run, qrels, "-m", "iprec@2")
    assert bad.exit_code == 2 and "level must be a number from 0 to 1" in bad.stderr


def test_compat_without_measures_prints_trec_eval_default_output(tmp_path, run_cli):
    """trec_eval's default lines (runid and num_q aside), in its order, with its values; on
    trec_eval's own test collection the output equals its test/out.test of 9.0.8 line for
    line (test_trec_eval_own)."""
    from .test_trec import write_qrels, write_run

    preds, truth = generate(91, 80, 150, 40, 15)
    truth = truth[truth.user_id.isin(set(preds.user_id))]  # trec_eval without -c skips them
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(
        qrels, {"num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                "recip_rank", "iprec_at_recall", "P"}).evaluate(run)
    run_path, qrels_path = tmp_path / "a.run", tmp_path / "a.qrels"
    write_run(preds, run_path)
    write_qrels(truth, qrels_path)
    r = run_cli("score", run_path, qrels_path, "--compat", "trec_eval-9", "-f", "trec")
    assert r.exit_code == 0, r.stderr
    levels = [f"iprec_at_recall_{i / 10:.2f}" for i in range(11)]
    cuts = [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", *levels, *cuts]
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    # trec_eval's first two lines: the run's tag (of its last line) and the queries
    assert [line[0].strip() for line in lines[:2]] == ["runid", "num_q"]
    assert lines[1][1:] == ["all", str(truth.user_id.nunique())]
    lines = lines[2:]
    assert [name.strip() for name, _, _ in lines] == names
    users = list(theirs.values())
    for padded, who, value in lines:
        name = padded.strip()
        column = [v[name] for v in users]
        if name.startswith("num_"):
            want = f"{sum(column):.0f}"
        elif name == "gm_map":
            want = f"{math.exp(sum(column) / len(column)):.4f}"
        else:
            want = f"{sum(column) / len(column):.4f}"
        assert (who, value) == ("all", want), name


def test_compat_orders_by_score_when_a_file_has_ranks_too(run_cli, write):
    """trec_eval never reads the rank column; under --compat trec_eval neither does rankeval,
    and it says so when the ranks tell another order."""
    preds, truth = generate(93, 60, 90, 20, 10)
    preds = preds.assign(score=np.round(preds.score, 0))  # ties the ranks break their own way
    shuffled = preds.sample(frac=1, random_state=1)
    shuffled["rank"] = shuffled.groupby("user_id").cumcount() + 1  # an order of its own
    qrels, run = as_dicts(preds, truth)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)
    p, t = write("p.csv", shuffled.to_csv(index=False)), write("t.csv", truth.to_csv(index=False))
    r = run_cli("score", p, t, "--compat", "trec_eval", "-m", "map,ndcg_cut.10", "-f", "json",
                "--per-user", str(p) + ".users.csv")
    assert r.exit_code == 0, r.stderr
    assert "ranks that disagree with their scores: the 'score' column orders the lists " \
           "(--order-by score, as trec_eval, pytrec_eval and ir_measures order them; 'rank' " \
           "is not used)" in r.stderr
    table = pd.read_csv(str(p) + ".users.csv", dtype={"user_id": str}).set_index("user_id")
    for user, values in theirs.items():
        assert table.loc[user, "map@all"] == pytest.approx(values["map"], abs=1e-12)
        assert table.loc[user, "ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
    plain = evaluate(shuffled, truth, ["map@all"], ap_denominator="relevant",
                     relevance_threshold=1, zero_relevant_users="zero")
    assert plain.metrics["map@all"] != json.loads(r.stdout)["metrics"]["map@all"]  # ranks won


def test_readme_worked_examples():
    """The README's hand computations of bpref, RBP, its residual and ERR."""
    preds = pd.DataFrame({"user_id": "q", "item_id": ["d1", "d2", "d3", "d4", "d5"],
                          "rank": [1, 2, 3, 4, 5]})
    truth = pd.DataFrame({"user_id": "q", "item_id": ["d1", "d2", "d4", "d5", "d6", "d7"],
                          "relevance": [0, 1, 1, 0, 1, 0]})
    got = evaluate(preds, truth, ["bpref", "rbp", "rbp_residual"]).metrics
    assert got["bpref"] == pytest.approx((2 / 3 + 2 / 3) / 3, abs=1e-15)
    assert got["rbp"] == pytest.approx(0.2 * (0.8 + 0.8**3), abs=1e-15)
    assert got["rbp_residual"] == pytest.approx(0.2 * 0.8**2 + 0.8**5, abs=1e-15)
    graded = pd.DataFrame({"user_id": "q", "item_id": ["d1", "d3", "d4"],
                           "relevance": [2, 3, 1]})
    err = evaluate(preds, graded, ["err@5"]).metrics["err@5"]
    assert err == pytest.approx(3 / 16 + (13 / 16) * (7 / 16) / 3
                                + (13 / 16) * (9 / 16) * (1 / 16) / 4, abs=1e-15)
    assert f"{err:.7f}" == "0.3131307"


def test_compare_reports_gm_map_on_its_own_scale(run_cli):
    """compare tests gm_map on the per-user logs but shows geometric means and their delta."""
    sample = "sample_data/"
    r = run_cli("compare", sample + "preds.csv", sample + "popular.csv", sample + "truth.csv",
                "-m", "gm_map@10", "-f", "json", "-q")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    means = [evaluate(sample + f, sample + "truth.csv", ["gm_map@10"]).metrics["gm_map@10"]
             for f in ("preds.csv", "popular.csv")]
    cell = doc["comparisons"][0]
    assert cell["baseline_mean"] == pytest.approx(means[0], rel=1e-12)
    assert cell["mean"] == pytest.approx(means[1], rel=1e-12)
    assert cell["delta"] == pytest.approx(means[1] - means[0], rel=1e-12)
    assert cell["ci"][0] < cell["delta"] < cell["ci"][1]


def test_compat_ignores_repeated_ranks_as_trec_eval_does(run_cli, write):
    """trec_eval never reads the rank field: repeated ranks are no error under compat."""
    run = write("a.csv", "user_id,item_id,rank,score\nq,a,1,3.0\nq,b,1,2.0\nq,c,1,1.0\n")
    qrels = write("t.csv", "user_id,item_id,relevance\nq,b,1\n")
    r = run_cli("score", run, qrels, "--compat", "trec_eval", "-m", "recip_rank", "-f", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["metrics"]["mrr@all"] == 0.5
    plain = run_cli("score", run, qrels, "-m", "mrr@10")
    assert plain.exit_code == 2 and "ranks repeated within a user" in plain.stderr
