"""The largest gap between user segments (#33): its value by definition, its bootstrap
interval against normal theory, and the --max-gap gate."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.analysis import gaps as gaps_module
from rankeval.analysis.gaps import gaps


def _segments(seed: int = 0):
    rng = np.random.default_rng(seed)
    users = [f"u{i}" for i in range(240)]
    truth = pd.DataFrame([(u, f"d{j}", int(rng.random() < 0.4)) for u in users
                          for j in range(8)], columns=["user_id", "item_id", "relevance"])
    truth.loc[truth.groupby("user_id").head(1).index, "relevance"] = 1  # all evaluated
    run = pd.DataFrame([(u, f"d{j}", r + 1) for u in users
                        for r, j in enumerate(rng.permutation(8))],
                       columns=["user_id", "item_id", "rank"])
    table = pd.DataFrame({"user_id": users[:-10],  # ten users outside it: (missing)
                          "group": rng.choice(["a", "b", "c"], size=len(users) - 10)})
    return run, truth, table


def test_the_gap_is_best_minus_worst_segment_mean_missing_aside():
    run, truth, table = _segments()
    ev = rankeval.evaluate(run, truth, metrics="ndcg@3,ee_l@3").by_segment(table, "group")
    per_user = ev.per_user.merge(table, on="user_id", how="left")
    means = per_user.groupby("group")[["ndcg@3", "ee_l@3"]].mean()  # (missing) dropped
    by_metric = {g.metric: g for g in ev.gaps["group"]}
    for metric, lower in (("ndcg@3", False), ("ee_l@3", True)):
        g = by_metric[metric]
        assert g.gap == pytest.approx(means[metric].max() - means[metric].min(), abs=1e-12)
        best = means[metric].idxmin() if lower else means[metric].idxmax()
        worst = means[metric].idxmax() if lower else means[metric].idxmin()
        assert (g.best, g.worst, g.segments) == (best, worst, 3)
        assert g.low <= g.high and g.method == "bootstrap"


@pytest.mark.parametrize("method", ["bootstrap", "normal"])
def test_the_interval_matches_normal_theory_on_large_segments(monkeypatch, method):
    """Two segments far apart: the gap's bootstrap interval is the difference of means' normal
    interval, gap +- 1.96 sqrt(s1^2/n1 + s2^2/n2), within 6%; both methods alike."""
    if method == "normal":
        monkeypatch.setattr(gaps_module, "_EXACT_DRAWS", 0)
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.6, 0.2, 3000), rng.normal(0.4, 0.25, 2000)
    labels = np.array(["a"] * 3000 + ["b"] * 2000, dtype=object)
    (g,) = gaps({"m": np.concatenate([a, b])}, labels, "group", lambda m: False,
                rounds=4000, seed=1)
    assert g.method == method
    half = 1.96 * math.sqrt(a.var() / len(a) + b.var() / len(b))
    assert g.gap == pytest.approx(a.mean() - b.mean(), abs=1e-12)
    assert g.low == pytest.approx(g.gap - half, abs=0.06 * half)
    assert g.high == pytest.approx(g.gap + half, abs=0.06 * half)


def test_a_metric_in_one_segment_has_no_gap():
    labels = np.array(["a", "a", "b", "(missing)"], dtype=object)
    (g,) = gaps({"m": np.array([0.5, 0.7, np.nan, 0.1])}, labels, "group", lambda m: False)
    assert math.isnan(g.gap) and g.segments == 1


def test_max_gap_gate_reports_and_refuses(tmp_path, run_cli):
    run, truth, table = _segments(1)
    paths = {}
    for name, frame in (("run", run), ("truth", truth), ("users", table)):
        paths[name] = str(tmp_path / f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    ev = rankeval.evaluate(run, truth, metrics="ndcg@3").by_segment(table, "group")
    gap = ev.gaps["group"][0].gap
    base = [paths["run"], paths["truth"], "-m", "ndcg@3", "--segments", paths["users"],
            "--segment-by", "group"]
    failed = run_cli("score", *base, "--max-gap", f"ndcg@3={gap * 0.9}", "-f", "json", "-q")
    assert failed.exit_code == 1
    doc = json.loads(failed.stdout)
    assert doc["gaps"]["group"][0]["gap"] == pytest.approx(gap, abs=1e-15)
    assert [g["metric"] for g in doc["gates"]] == ["ndcg@3[gap:group]"]
    assert run_cli("score", *base, "--max-gap", f"ndcg@3={gap * 1.1}", "-q").exit_code == 0
    csv = run_cli("score", *base, "-f", "csv", "-q").stdout
    assert "ndcg@3[gap:group],ndcg,3," in csv
    alone = run_cli("score", paths["run"], paths["truth"], "-m", "ndcg@3", "--max-gap",
                    "ndcg@3=0.1")
    assert alone.exit_code == 2 and "--segments" in alone.stderr
