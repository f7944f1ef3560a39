"""SPEC section 5: every worked example, through the library and through the CLI."""

from __future__ import annotations

import pytest

from rankeval import evaluate

from .conftest import SAMPLE, judged, ranked

TRUTH_1 = {"u": {"A": 0.1, "B": 0.5, "C": 0.7, "D": 0.5, "E": 0.1}}
TRUTH_3 = {
    "u1": {"A": 5, "B": 3},
    "u2": {"C": 5},
    "u3": {"A": 2, "D": 1},
    "u4": {"B": 5, "C": 4, "D": 3},
}
PREDS_3 = {
    "u1": list("DABC"),
    "u2": list("CDAB"),
    "u3": list("DBCA"),
    "u4": list("ACBD"),
}


def test_example_1_idcg_is_cut_at_k():
    r = evaluate(ranked({"u": list("ABC")}), judged(TRUTH_1), ["dcg", "idcg", "ndcg"], k=3)
    assert r.metrics["dcg@3"] == pytest.approx(0.7654648767857287, abs=1e-12)
    assert r.metrics["idcg@3"] == pytest.approx(1.2654648767857286, abs=1e-12)
    assert r.metrics["ndcg@3"] == pytest.approx(0.6048882832133625, abs=1e-12)
    # The DCG of all five truth items in ideal order is not idcg@3.
    full = evaluate(ranked({"u": list("CBDAE")}), judged(TRUTH_1), ["dcg"], k=5)
    assert full.metrics["dcg@5"] == pytest.approx(1.347217813316522, abs=1e-12)


def test_example_2_and_the_mean_of_examples_1_and_2():
    r2 = evaluate(ranked({"u": list("DACBE")}), judged(TRUTH_1), ["ndcg"], k=5)
    assert r2.metrics["ndcg@5"] == pytest.approx(0.8663161395143223, abs=1e-12)
    r1 = evaluate(ranked({"u": list("ABC")}), judged(TRUTH_1), ["ndcg"], k=3)
    mean = (r1.metrics["ndcg@3"] + r2.metrics["ndcg@5"]) / 2
    assert mean == pytest.approx(0.7356022113638424, abs=1e-12)


EXPECTED_3 = {
    # user: (dcg@4, idcg@4, ndcg@4, AP, RR, RR most-relevant)
    "u1": (4.6546, 6.8928, 0.6753, (1 / 2 + 2 / 3) / 2, 1 / 2, 1 / 2),
    "u2": (5.0, 5.0, 1.0, 1.0, 1.0, 1.0),
    "u3": (1.8614, 2.6309, 0.7075, (1 / 1 + 2 / 4) / 2, 1.0, 1 / 4),
    "u4": (6.3157, 9.0237, 0.6999, (1 / 2 + 2 / 3 + 3 / 4) / 3, 1 / 2, 1 / 3),
}


def test_example_3_per_user_and_means():
    r = evaluate(ranked(PREDS_3), judged(TRUTH_3), ["dcg", "idcg", "ndcg", "map", "mrr"], k=4)
    table = r.per_user.set_index("user_id")
    for user, (dcg, idcg, ndcg, ap, rr, _) in EXPECTED_3.items():
        assert table.loc[user, "dcg@4"] == pytest.approx(dcg, abs=5e-5)
        assert table.loc[user, "idcg@4"] == pytest.approx(idcg, abs=5e-5)
        assert table.loc[user, "ndcg@4"] == pytest.approx(ndcg, abs=5e-5)
        assert table.loc[user, "map@4"] == pytest.approx(ap, abs=1e-12)
        assert table.loc[user, "mrr@4"] == pytest.approx(rr, abs=1e-12)
    assert r.metrics["ndcg@4"] == pytest.approx(0.7706716226930437, abs=1e-12)
    assert r.metrics["map@4"] == pytest.approx(0.7431, abs=5e-5)
    assert r.metrics["mrr@4"] == pytest.approx(0.75, abs=1e-12)


def test_example_3_most_relevant_rr():
    r = evaluate(ranked(PREDS_3), judged(TRUTH_3), ["mrr"], k=4, rr_target="most-relevant")
    values = dict(zip(r.per_user["user_id"], r.per_user["mrr@4"], strict=True))
    for user, expected in EXPECTED_3.items():
        assert values[user] == pytest.approx(expected[5], abs=1e-12)
    assert r.metrics["mrr@4"] == pytest.approx(0.5208, abs=5e-5)


@pytest.mark.parametrize(
    ("truth", "k", "expected"),
    [(["1", "2", "3", "4", "5"], 2, 0.25), (["1", "2"], 5, 0.325)],
)
def test_example_4_ap_denominator_min_r_k(truth, k, expected):
    preds = ranked({"u": ["6", "4", "7", "1", "2"]})
    r = evaluate(preds, judged({"u": dict.fromkeys(truth, 1)}), ["map"], k=k)
    assert r.metrics[f"map@{k}"] == pytest.approx(expected, abs=1e-12)


def _by_rank(rels):
    items = [f"i{j}" for j in range(len(rels))]
    return ranked({"u": items}), judged({"u": dict(zip(items, rels, strict=True))})


def test_example_5_linear_and_exponential_gain():
    preds, truth = _by_rank([2, 0, 3, 2])
    lin = evaluate(preds, truth, ["dcg", "ndcg"], k=4)
    assert lin.metrics["dcg@4"] == pytest.approx(4.361353116146786, abs=1e-12)
    assert lin.metrics["ndcg@4"] == pytest.approx(0.8288615669472547, abs=1e-12)
    exp = evaluate(preds, truth, ["dcg", "ndcg"], k=4, gain="exponential")
    assert exp.metrics["dcg@4"] == pytest.approx(7.79202967422018, abs=1e-12)
    assert exp.metrics["ndcg@4"] == pytest.approx(0.7497534568197889, abs=1e-12)


def test_example_6_perfect_graded_list():
    preds, truth = _by_rank([3, 2, 1])
    r = evaluate(preds, truth, ["dcg", "ndcg"], k=3)
    assert r.metrics["dcg@3"] == pytest.approx(4.7618595071429155, abs=1e-12)
    assert r.metrics["ndcg@3"] == pytest.approx(1.0, abs=1e-12)


def test_example_3_from_the_command_line(run_cli):
    run = run_cli(
        "score",
        SAMPLE / "spec_example3_preds.csv",
        SAMPLE / "spec_example3_truth.csv",
        "--k", "4", "-m", "ndcg,map,mrr", "-f", "json",
    )
    assert run.exit_code == 0, run.stderr
    metrics = run.json()["metrics"]
    assert metrics["ndcg@4"] == pytest.approx(0.7706716226930437, abs=1e-12)
    assert metrics["map@4"] == pytest.approx(0.7430555555555556, abs=1e-12)
    assert metrics["mrr@4"] == pytest.approx(0.75, abs=1e-12)
    most = run_cli(
        "score",
        SAMPLE / "spec_example3_preds.csv",
        SAMPLE / "spec_example3_truth.csv",
        "--k", "4", "-m", "mrr", "--rr-target", "most-relevant", "-f", "json",
    )
    assert most.json()["metrics"]["mrr@4"] == pytest.approx((1 / 2 + 1 + 1 / 4 + 1 / 3) / 4)


def test_example_5_from_the_command_line(run_cli, write):
    preds = write("p.csv", "user_id,item_id,rank\nu,a,1\nu,b,2\nu,c,3\nu,d,4\n")
    truth = write("t.csv", "user_id,item_id,relevance\nu,a,2\nu,b,0\nu,c,3\nu,d,2\n")
    for gain, expected in (("linear", 0.8288615669472547), ("exponential", 0.7497534568197889)):
        run = run_cli("score", preds, truth, "-m", "ndcg@4", "--gain", gain, "-f", "json")
        assert run.exit_code == 0, run.stderr
        assert run.json()["metrics"]["ndcg@4"] == pytest.approx(expected, abs=1e-12)
