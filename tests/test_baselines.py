"""Several baselines in one compare: every run against each baseline, one family per metric,
every report and gate, and a baseline with an undefined value left out of the family."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp
from statsmodels.stats.multitest import multipletests

import rankeval

USERS = [f"u{i}" for i in range(60)]
METRICS = ["ndcg@5", "recall@5", "map@5"]
CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}


def _run(rng: np.random.Generator, truth: pd.DataFrame, hit: float) -> pd.DataFrame:
    """Five items per user: each a relevant one with probability ``hit``."""
    rows = []
    relevant = truth.groupby("user_id")["item_id"].apply(list)
    for user in USERS:
        items = [rng.choice(relevant[user]) if rng.random() < hit else f"x{rng.integers(500)}"
                 for _ in range(5)]
        items = list(dict.fromkeys(items))
        rows += [(user, item, r) for r, item in enumerate(items, 1)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "rank"])


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(7)
    truth = pd.DataFrame([(u, f"i{rng.integers(40)}", 1) for u in USERS for _ in range(4)],
                         columns=["user_id", "item_id", "relevance"]).drop_duplicates(
        ["user_id", "item_id"])
    runs = {name: _run(rng, truth, hit) for name, hit in
            [("bm25", 0.2), ("prod", 0.45), ("new", 0.5), ("cheap", 0.25)]}
    folder = tmp_path_factory.mktemp("baselines")
    truth.to_csv(folder / "truth.csv", index=False)
    for name, run in runs.items():
        run.to_csv(folder / f"{name}.csv", index=False)
    return folder, truth, runs


@pytest.mark.parametrize("correction", list(CORRECTIONS))
def test_each_run_against_each_baseline_one_family_per_metric(data, correction):
    _, truth, runs = data
    result = rankeval.compare(runs, truth, METRICS, baseline_run=["bm25", "prod"],
                              correction=correction)
    assert result.baselines == ["bm25", "prod"] and result.candidates == ["new", "cheap"]
    per_user = {name: rankeval.evaluate(run, truth, METRICS).per_user.set_index("user_id")
                for name, run in runs.items()}
    for metric in METRICS:
        cells = [c for c in result.cells if c.metric == metric]
        assert [(c.run, c.baseline) for c in cells] == [
            ("new", "bm25"), ("cheap", "bm25"), ("new", "prod"), ("cheap", "prod")]
        # each test is scipy's paired t-test of the two runs' per-user values
        raw = [sp.ttest_rel(per_user[c.run][metric], per_user[c.baseline][metric]).pvalue
               for c in cells]
        assert [c.stats.p_value for c in cells] == pytest.approx(raw, rel=1e-9)
        # and the correction counts all four (statsmodels' adjusted p-values)
        expected = multipletests(raw, method=CORRECTIONS[correction])[1]
        assert [c.p_adjusted for c in cells] == pytest.approx(expected, rel=1e-9)
        for c in cells:
            assert c.stats.delta == pytest.approx(
                per_user[c.run][metric].mean() - per_user[c.baseline][metric].mean())


def test_one_baseline_is_the_family_of_before(data):
    """A single baseline (a name or a one-item list) gives the cells of the default."""
    _, truth, runs = data
    default = rankeval.compare(runs, truth, METRICS)
    named = rankeval.compare(runs, truth, METRICS, baseline_run="bm25")
    listed = rankeval.compare(runs, truth, METRICS, baseline_run=["bm25"])
    assert default.baselines == named.baselines == listed.baselines == ["bm25"]
    for a, b, c in zip(default.cells, named.cells, listed.cells, strict=True):
        assert a.to_dict() == b.to_dict() == c.to_dict()
        assert a.baseline == "bm25"


def test_every_format_names_the_baseline_of_each_test(run_cli, data):
    folder, _, _ = data
    files = [str(folder / f"{n}.csv") for n in ("bm25", "prod", "new")]
    base = ["compare", *files, str(folder / "truth.csv"), "-m", "ndcg@5,recall@5",
            "--baseline-run", "bm25", "--baseline-run", "prod", "-q"]
    doc = json.loads(run_cli(*base, "-f", "json").stdout)
    assert doc["baselines"] == ["bm25", "prod"] and doc["baseline"] == "bm25"
    assert [(c["run"], c["baseline"], c["metric"]) for c in doc["comparisons"]] == [
        ("new", "bm25", "ndcg@5"), ("new", "prod", "ndcg@5"),
        ("new", "bm25", "recall@5"), ("new", "prod", "recall@5")]
    rows = run_cli(*base, "-f", "csv").stdout.splitlines()
    assert rows[0].endswith(",baseline")
    assert [r.split(",")[-1] for r in rows[1:]] == ["bm25", "prod", "bm25", "prod"]
    table = run_cli(*base).stdout
    assert "baselines: bm25, prod (a delta against each, in this order)" in table
    assert re.search(r"^bm25 \(baseline\)", table, re.M)
    assert re.search(r"^prod \(baseline\)", table, re.M)
    means = {c["baseline"]: c for c in doc["comparisons"] if c["metric"] == "ndcg@5"}
    new_row = next(line for line in table.splitlines() if line.startswith("new "))
    deltas = re.findall(r"[+-]\d\.\d{4}", new_row)[:2]  # ndcg@5 against each, in order
    assert deltas == [f"{means[b]['delta']:+.4f}" for b in ("bm25", "prod")]
    assert re.search(r"^new\s+bm25\s+ndcg@5", table, re.M)
    assert re.search(r"^new\s+prod\s+ndcg@5", table, re.M)
    md = run_cli(*base, "-f", "markdown").stdout
    assert "| run | baseline | metric | delta |" in md
    assert "| new | prod | ndcg@5 |" in md
    html = run_cli(*base, "-f", "html").stdout
    assert "new vs bm25" in html and "new vs prod" in html
    assert "Against the baselines bm25, prod" in html
    assert "delta new vs prod" in html
    assert "baselines <strong>bm25</strong>, <strong>prod</strong>" in html  # the page's lead


def test_summary_cells_line_up(run_cli, data):
    """Right-aligned cells end with a mark or a space in its place: the means and every
    delta stand in columns, whatever is significant."""
    folder, _, _ = data
    files = [str(folder / f"{n}.csv") for n in ("bm25", "prod", "new", "cheap")]
    table = run_cli("compare", *files, str(folder / "truth.csv"), "-m", "ndcg@5",
                    "--baseline-run", "bm25", "--baseline-run", "prod", "-q").stdout
    summary = table.split("\n\n")[0]  # the first table: a row per run
    rows = [line for line in summary.splitlines() if line.startswith(("new ", "cheap "))]
    assert len(rows) == 2
    means = [re.search(r"\d\.\d{4}", row).start() for row in rows]
    assert means[0] == means[1], table
    assert any("*" in row for row in rows), table  # a marked and an unmarked delta lined up


def test_fail_if_worse_against_any_baseline(run_cli, data):
    folder, _, _ = data
    files = [str(folder / f"{n}.csv") for n in ("bm25", "prod", "cheap")]
    truth = str(folder / "truth.csv")
    # cheap is significantly worse than prod, not than bm25
    only_bm25 = run_cli("compare", *files, truth, "-m", "ndcg@5", "--baseline-run", "bm25",
                        "--baseline-run", "cheap", "--fail-if-worse", "-q")
    assert only_bm25.exit_code == 0, only_bm25.stderr
    both = run_cli("compare", *files, truth, "-m", "ndcg@5", "--baseline-run", "bm25",
                   "--baseline-run", "prod", "--fail-if-worse", "-q")
    assert both.exit_code == 1
    assert "rankeval: FAILED cheap is worse than prod on ndcg@5" in both.stderr
    assert "worse than bm25" not in both.stderr


def test_margin_gates_give_a_verdict_per_run_and_baseline(run_cli, data):
    folder, _, _ = data
    files = [str(folder / f"{n}.csv") for n in ("bm25", "prod", "new")]
    r = run_cli("compare", *files, str(folder / "truth.csv"), "-m", "ndcg@5",
                "--baseline-run", "bm25", "--baseline-run", "prod",
                "--non-inferior", "ndcg@5=0.05", "-f", "json")
    doc = json.loads(r.stdout)
    assert [(g["run"], g["baseline_run"]) for g in doc["gates"]] == [("new", "bm25"),
                                                                      ("new", "prod")]
    assert r.exit_code == (0 if doc["passed"] else 1)
    for g in doc["gates"]:
        assert f"new ndcg@5 not worse than {g['baseline_run']} by more than 0.05" in r.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--baseline-run", "bm25", "--baseline-run", "bm25"], "names a run twice"),
    (["--baseline-run", "bm25", "--baseline-run", "prod", "--baseline-run", "new"],
     "every run is a baseline: leave one out of --baseline-run"),
    (["--baseline-run", "bm25", "--baseline-run", "nope"], "'nope' is not a run name"),
])
def test_bad_baselines_are_one_line_exit_2(run_cli, data, args, message):
    folder, _, _ = data
    files = [str(folder / f"{n}.csv") for n in ("bm25", "prod", "new")]
    r = run_cli("compare", *files, str(folder / "truth.csv"), "-m", "ndcg@5", *args)
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_library_errors_name_keywords(data):
    _, truth, runs = data
    with pytest.raises(rankeval.OptionError, match="leave one out of baseline_run"):
        rankeval.compare(runs, truth, "ndcg@5", baseline_run=list(runs))


def test_segments_test_each_run_against_each_baseline(data, tmp_path):
    _, truth, runs = data
    segments = pd.DataFrame({"user_id": USERS, "tier": ["a", "b", "c"] * 20})
    result = rankeval.compare(runs, truth, "ndcg@5", baseline_run=["bm25", "prod"],
                              segments=segments, segment_by="tier")
    rows = result.segments["tier"]
    tests = [(row["value"], c.run, c.baseline) for row in rows for c in row["cells"]]
    assert len(tests) == 3 * 2 * 2 and len(set(tests)) == len(tests)
    raw = [c.stats.p_value for row in rows for c in row["cells"]]
    expected = multipletests(raw, method="holm")[1]  # one family: runs x baselines x segments
    adjusted = [c.p_adjusted for row in rows for c in row["cells"]]
    assert adjusted == pytest.approx(expected, rel=1e-9)
    text = repr(result)  # the segment table's rows name their baseline, and its note says so
    assert re.search(r"^a\s+20\s+new vs prod ", text, re.M), text
    assert "mean and delta against the baseline each row names (run vs baseline)" in text


# --- a baseline whose value is undefined ---------------------------------------------------

def test_an_undefined_baseline_leaves_the_family_with_a_notice(run_cli, tmp_path):
    """ild needs two items with features in a list: the baseline 'blind' recommends items
    without features, so its ild@3 is undefined; its tests leave the family of ild@3."""
    rng = np.random.default_rng(3)
    users = [f"u{i}" for i in range(40)]
    featured = [f"i{j}" for j in range(12)]
    pd.DataFrame({"item_id": featured, "features": [f"g{j % 4}|h{j % 3}" for j in range(12)]}
                 ).to_csv(tmp_path / "features.csv", index=False)
    pd.DataFrame([(u, rng.choice(featured), 1) for u in users],
                 columns=["user_id", "item_id", "relevance"]).to_csv(tmp_path / "truth.csv",
                                                                    index=False)
    for name, pool in [("blind", [f"z{j}" for j in range(12)]), ("ok", featured),
                       ("a", featured), ("b", featured)]:
        rows = [(u, item, r) for u in users
                for r, item in enumerate(rng.choice(pool, 3, replace=False), 1)]
        pd.DataFrame(rows, columns=["user_id", "item_id", "rank"]).to_csv(
            tmp_path / f"{name}.csv", index=False)
    files = [str(tmp_path / f"{n}.csv") for n in ("blind", "ok", "a", "b")]
    r = run_cli("compare", *files, str(tmp_path / "truth.csv"), "-m", "ild@3,precision@3",
                "--item-features", str(tmp_path / "features.csv"), "--baseline-run", "blind",
                "--baseline-run", "ok", "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert ("rankeval: warning: ild@3 is undefined in the baseline blind (" in r.stderr
            and "2 tests against it left out of the correction, which counts 2 tests for "
            "ild@3" in r.stderr), r.stderr
    cells = {(c["run"], c["baseline"], c["metric"]): c for c in doc["comparisons"]}
    for run in ("a", "b"):
        assert cells[(run, "blind", "ild@3")]["p_adjusted"] is None
        assert cells[(run, "blind", "ild@3")]["significant"] is None
    counted = [cells[(run, "ok", "ild@3")] for run in ("a", "b")]
    expected = multipletests([c["p_value"] for c in counted], method="holm")[1]
    assert [c["p_adjusted"] for c in counted] == pytest.approx(expected, rel=1e-9)
    # precision@3 is defined everywhere: its family holds all four tests
    full = [cells[(run, base, "precision@3")] for base in ("blind", "ok") for run in ("a", "b")]
    expected = multipletests([c["p_value"] for c in full], method="holm")[1]
    assert [c["p_adjusted"] for c in full] == pytest.approx(expected, rel=1e-9)
    assert "blind:" in doc["undefined"]["ild@3"]
    one = run_cli("compare", files[0], *files[2:], str(tmp_path / "truth.csv"), "-m", "ild@3",
                  "--item-features", str(tmp_path / "features.csv"))
    assert one.exit_code == 0, one.stderr
    # one baseline: the footer says the metric is left out; no warning repeats it
    assert "left out of the correction" not in one.stderr
    assert "(n/a: left out of the tests and the correction)" in one.stdout
    quiet = run_cli("compare", *files, str(tmp_path / "truth.csv"), "-m", "ild@3",
                    "--item-features", str(tmp_path / "features.csv"), "--baseline-run",
                    "blind", "--baseline-run", "ok", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert re.search(r"^a\s+0\.\d{4} n/a [+-]\d\.\d{4}", quiet.stdout, re.M), quiet.stdout
