"""--stats: the distribution of each metric over users, in every report format (#16)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rankeval import evaluate
from rankeval.errors import OptionError

S = "sample_data/"


def test_statistics_are_those_of_the_per_user_values():
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg", "recall"], [5, 10])
    d = r.with_stats("mean,median,p10,p90,p25,std,min,max,zeros").distribution
    for spec in ("ndcg@5", "ndcg@10", "recall@10"):
        v = r.values(spec)
        assert d[spec]["mean"] == pytest.approx(r.metrics[spec], abs=1e-15)
        assert d[spec]["median"] == float(np.median(v))
        assert d[spec]["p10"] == float(np.percentile(v, 10))
        assert d[spec]["p25"] == float(pd.Series(v).quantile(0.25))  # the same interpolation
        assert d[spec]["std"] == pytest.approx(float(pd.Series(v).std()), rel=1e-12)
        assert d[spec]["zeros"] == np.mean(v == 0)
        assert (d[spec]["min"], d[spec]["max"]) == (v.min(), v.max())
    assert r.distribution == {}  # with_stats returns a copy
    with pytest.raises(OptionError, match="unknown statistic 'p101'"):
        r.with_stats("p101")


def test_users_a_metric_cannot_score_are_left_out():
    preds = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "y", "x"],
                          "rank": [1, 2, 1]})
    truth = pd.DataFrame({"user_id": ["a", "b"], "item_id": ["x", "x"], "relevance": 1.0})
    feats = pd.DataFrame({"item_id": ["x", "y"], "f0": [1.0, 0.0], "f1": [0.0, 1.0]})
    r = evaluate(preds, truth, ["ild"], 2, item_features=feats).with_stats("median,zeros")
    assert r.distribution["ild@2"] == {"median": 1.0, "zeros": 0.0}


def test_every_report_format_carries_it(run_cli):
    base = [S + "preds.csv", S + "truth.csv", "-m", "ndcg@10,coverage@10", "--train",
            S + "train.csv", "--stats", "median,p90,zeros", "-q"]
    doc = json.loads(run_cli("score", *base, "-f", "json").stdout)
    assert set(doc["distribution"]) == {"ndcg@10"}  # corpus metrics have no distribution
    assert list(doc["distribution"]["ndcg@10"]) == ["median", "p90", "zeros"]
    table = run_cli("score", *base).stdout
    assert "metric   median     p90  zeros" in table and "17.1%" in table
    md = run_cli("score", *base, "-f", "markdown").stdout
    assert "| metric | median | p90 | zeros |" in md and "| ndcg@10 | 0.3173 |" in md
    csv = run_cli("score", *base, "-f", "csv").stdout.splitlines()
    assert csv[0] == "metric,name,k,value,scope,median,p90,zeros"
    assert csv[2].endswith(",corpus,,,")
    plain = json.loads(run_cli("score", S + "preds.csv", S + "truth.csv", "-f", "json",
                               "-q").stdout)
    assert plain["distribution"] is None
    bad = run_cli("score", S + "preds.csv", S + "truth.csv", "--stats", "p9x")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == ("rankeval: error: --stats: unknown statistic 'p9x' (known: "
                                  "mean, median, p0..p100, std, min, max, zeros)")


def test_a_bad_statistic_stops_before_any_input_is_read(run_cli, tmp_path):
    missing = str(tmp_path / "no-such.csv")
    r = run_cli("score", missing, missing + "2", "--stats", "medium")
    assert r.exit_code == 2
    assert "unknown statistic 'medium'" in r.stderr and "no-such" not in r.stderr
