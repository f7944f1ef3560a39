"""--segments / --segment-by: every metric per segment value, with user counts (#16)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rankeval import evaluate
from rankeval.errors import InputError, OptionError

S = "sample_data/"


def _segments(n: int = 289) -> pd.DataFrame:
    ids = [f"u{i:03d}" for i in range(1, n + 1)]
    return pd.DataFrame({"user_id": ids,
                         "country": np.where(np.arange(n) % 3 == 0, "DE", "FR"),
                         "activity": np.arange(n) * 1.5})


def test_segment_means_are_group_means_of_the_per_user_values():
    seg = _segments()
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg@10", "recall@5"]).by_segment(
        seg, ["country", "activity:quartiles"])
    table = r.per_user.merge(seg, on="user_id", how="left")
    table["country"] = table["country"].fillna("(missing)")
    expected = table.groupby("country")[["ndcg@10", "recall@5"]].mean()
    got = {s.value: s for s in r.segments["country"]}
    assert [s.value for s in r.segments["country"]] == ["DE", "FR", "(missing)"]
    for value, row in expected.iterrows():
        assert got[value].users == int((table.country == value).sum())
        assert got[value].metrics["ndcg@10"] == pytest.approx(row["ndcg@10"], abs=1e-12)
        assert got[value].metrics["recall@5"] == pytest.approx(row["recall@5"], abs=1e-12)
    bins = r.segments["activity:quartiles"]
    assert [s.value for s in bins][-1] == "(missing)"
    assert sum(s.users for s in bins) == len(r.per_user)
    # Quartile edges of the segment file's values; each evaluated user in its bin.
    edges = np.quantile(seg.activity, [0, 0.25, 0.5, 0.75, 1])
    joined = table.dropna(subset=["activity"])
    which = np.clip(np.searchsorted(edges, joined.activity, side="right") - 1, 0, 3)
    assert [s.users for s in bins[:4]] == np.bincount(which, minlength=4).tolist()
    assert bins[0].value.startswith("[0, ") and bins[3].value.endswith("]")


def test_segment_errors():
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg@10"])
    with pytest.raises(InputError, match="no column 'region'"):
        r.by_segment(_segments(), "region")
    twice = pd.concat([_segments(3), _segments(3)])
    with pytest.raises(InputError, match="users listed more than once"):
        r.by_segment(twice, "country")
    with pytest.raises(InputError):
        r.by_segment(_segments(), "country:quartiles")  # text cannot be binned
    with pytest.raises(OptionError, match=":quartiles, :deciles or :N"):
        r.by_segment(_segments(), "activity:thirds")


def test_every_report_format_carries_segments(run_cli, write):
    seg = write("seg.csv", _segments().to_csv(index=False))
    base = [S + "preds.csv", S + "truth.csv", "-m", "ndcg@10", "--segments", seg,
            "--segment-by", "country", "-q"]
    doc = json.loads(run_cli("score", *base, "-f", "json").stdout)
    rows = doc["segments"]["country"]
    assert [r["value"] for r in rows] == ["DE", "FR", "(missing)"]
    assert sum(r["users"] for r in rows) == doc["users"]["evaluated"]
    table = run_cli("score", *base).stdout
    assert "country    users  ndcg@10" in table and "(missing)" in table
    md = run_cli("score", *base, "-f", "markdown").stdout
    assert "| country | users | ndcg@10 |" in md and "| \\(missing) |" not in md
    csv = run_cli("score", *base, "-f", "csv").stdout.splitlines()
    assert any(line.startswith("ndcg@10[country=DE],ndcg,10,") and line.endswith(",segment")
               for line in csv)
    bad = run_cli("score", S + "preds.csv", S + "truth.csv", "--segment-by", "country")
    assert bad.exit_code == 2 and "--segment-by needs --segments FILE" in bad.stderr
    bad = run_cli("score", S + "preds.csv", S + "truth.csv", "--segments", seg)
    assert bad.exit_code == 2 and "--segments needs --segment-by COLUMN" in bad.stderr


def test_gates_can_name_a_segment(run_cli, write):
    seg = write("seg.csv", _segments().to_csv(index=False))
    base = [S + "preds.csv", S + "truth.csv", "-m", "ndcg@10", "--segments", seg,
            "--segment-by", "country", "-q"]
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg@10"]).by_segment(_segments(),
                                                                           "country")
    de = next(s for s in r.segments["country"] if s.value == "DE").metrics["ndcg@10"]
    passed = run_cli("score", *base, "--fail-under", f"ndcg@10[country=DE]={de - 0.001}")
    assert passed.exit_code == 0, passed.stderr
    failed = run_cli("score", *base, "--fail-under", f"ndcg@10[country=DE]>={de + 0.001}",
                     "-f", "json")
    assert failed.exit_code == 1
    gate = json.loads(failed.stdout)["gates"][0]
    assert gate["metric"] == "ndcg@10[country=DE]" and gate["value"] == de
    table = run_cli("score", *base, "--fail-under", f"ndcg@10[country=DE]={de + 0.001}")
    assert "ndcg@10[country=DE]" in table.stdout  # shown as written, not read as markup
    unknown = run_cli("score", *base, "--fail-under", "ndcg@10[country=XX]=0.3")
    assert unknown.exit_code == 2
    assert "no segment 'country=XX' (values of country: DE, FR, (missing))" in unknown.stderr
    drop = run_cli("score", *base, "--max-drop", "ndcg@10[country=DE]=0.01")
    assert drop.exit_code == 2 and "whole-run means" in drop.stderr


def test_compare_breaks_down_by_segment(run_cli, write):
    from rankeval.analysis.significance import compare, correct

    seg = write("seg.csv", _segments().to_csv(index=False))
    runs = [S + "preds.csv", S + "popular.csv", S + "truth.csv"]
    r = run_cli("compare", *runs, "-m", "ndcg@10", "--segments", seg, "--segment-by", "country",
                "-f", "json", "-q", "--per-user", str(seg) + ".users.csv")
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["segments"]["country"]
    assert [row["value"] for row in rows] == ["DE", "FR", "(missing)"]
    users = pd.read_csv(str(seg) + ".users.csv", dtype={"user_id": str}).merge(
        _segments(), on="user_id", how="left").fillna({"country": "(missing)"})
    tests = []
    for row in rows:
        part = users[users.country == row["value"]]
        assert row["users"] == len(part)
        tests.append(compare(part["preds/ndcg@10"].to_numpy(),
                             part["popular/ndcg@10"].to_numpy()))
    adjusted = correct([t.p_value for t in tests], "holm")  # over the segments of the metric
    for row, t, p in zip(rows, tests, adjusted, strict=True):
        cell = row["comparisons"][0]
        assert cell["delta"] == pytest.approx(t.delta, abs=1e-12)
        assert cell["p_value"] == pytest.approx(t.p_value, rel=1e-9)
        assert cell["p_adjusted"] == pytest.approx(p, rel=1e-9)
    csv = run_cli("compare", *runs, "-m", "ndcg@10", "--segments", seg, "--segment-by",
                  "country", "-f", "csv", "-q").stdout
    assert "popular,ndcg@10[country=DE]," in csv
    md = run_cli("compare", *runs, "-m", "ndcg@10", "--segments", seg, "--segment-by",
                 "country", "-f", "markdown", "-q").stdout
    assert "| country | users | run | ndcg@10 |" in md
    alone = run_cli("compare", *runs, "--segments", seg)
    assert alone.exit_code == 2 and "go together" in alone.stderr


def test_the_notebook_view_shows_segments_distribution_and_corpus_marks():
    seg = _segments()
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg@10", "coverage@10"],
                 train=S + "train.csv").by_segment(seg, "country").with_stats("median")
    page = r._repr_html_()
    assert "<th>country</th>" in page and "<th>(missing)</th>" in page  # a row is named
    assert "<th>median</th>" in page
    assert "corpus-level" in page


def test_segment_bins_cut_every_column_without_bins_of_its_own(run_cli, write):
    seg = _segments()
    r = evaluate(S + "preds.csv", S + "truth.csv", ["ndcg@10"])
    by_flag = r.by_segment(seg, ["activity", "country"], bins=None).segments
    assert [s.value for s in by_flag["country"]] == ["DE", "FR", "(missing)"]
    binned = r.by_segment(seg, ["activity"], bins="deciles").segments["activity:deciles"]
    assert binned == r.by_segment(seg, "activity:deciles").segments["activity:deciles"]
    kept = r.by_segment(seg, ["activity:3"], bins="quartiles").segments
    assert list(kept) == ["activity:3"]  # a column's own bins win
    with pytest.raises(InputError, match="non-numeric"):
        r.by_segment(seg, ["country"], bins="quartiles")
    path = write("seg.csv", seg)
    cli = run_cli("score", S + "preds.csv", S + "truth.csv", "-m", "ndcg@10", "--segments",
                  path, "--segment-by", "activity", "--segment-bins", "4", "-f", "json", "-q")
    assert cli.exit_code == 0, cli.stderr
    values = [s["value"] for s in cli.json()["segments"]["activity:4"]]
    assert values == [s.value for s in r.by_segment(seg, "activity:quartiles")
                      .segments["activity:quartiles"]]
    for command in (["score", S + "preds.csv"], ["compare", S + "preds.csv", S + "popular.csv"]):
        bad = run_cli(*command, S + "truth.csv", "--segments", path, "--segment-by",
                      "activity", "--segment-bins", "thirds")
        assert bad.exit_code == 2 and "--segment-bins 'thirds'" in bad.stderr
    alone = run_cli("compare", S + "preds.csv", S + "popular.csv", S + "truth.csv",
                    "--segments", path, "--segment-bins", "4")
    assert alone.exit_code == 2 and "--segment-by" in alone.stderr
