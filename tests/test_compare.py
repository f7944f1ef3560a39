"""rankeval compare from the command line: runs of different formats, tests, gates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from rankeval import evaluate

from .conftest import SAMPLE

TRUTH = SAMPLE / "truth.csv"
A = SAMPLE / "preds.csv"


@pytest.fixture
def runs(tmp_path):
    """b: the sample run with each user's list shuffled (worse); c: the same run as Parquet."""
    preds = pd.read_csv(A, dtype={"user_id": str, "item_id": str})
    rng = np.random.default_rng(1)
    worse = preds.assign(rank=preds.groupby("user_id")["rank"].transform(
        lambda r: rng.permutation(r.to_numpy())))
    worse.drop(columns="score").to_csv(tmp_path / "b.tsv", sep="\t", index=False)
    preds.to_parquet(tmp_path / "c.parquet", index=False)
    return tmp_path / "b.tsv", tmp_path / "c.parquet"


def test_three_runs_of_three_formats(run_cli, runs):
    b, c = runs
    r = run_cli("compare", A, b, c, TRUTH, "-m", "ndcg@10,map@10", "-f", "json", "--quiet")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert report["baseline"] == "preds"
    assert [x["name"] for x in report["runs"]] == ["preds", "b", "c"]
    assert report["users"]["shared"] == 298
    cells = {(x["run"], x["metric"]): x for x in report["comparisons"]}
    worse = cells[("b", "ndcg@10")]
    assert worse["delta"] < 0 and worse["significant"]
    same = cells[("c", "ndcg@10")]
    assert same["delta"] == 0 and same["p_value"] == 1.0 and not same["significant"]
    assert same["wins"] == same["losses"] == 0

    # The numbers are the score command's, and the p-value is scipy's paired t-test.
    ours = evaluate(str(A), str(TRUTH), ["ndcg@10"]).per_user.set_index("user_id")["ndcg@10"]
    theirs = evaluate(str(b), str(TRUTH), ["ndcg@10"]).per_user.set_index("user_id")["ndcg@10"]
    assert report["runs"][1]["metrics"]["ndcg@10"] == pytest.approx(theirs.mean())
    raw = sp.ttest_rel(theirs.to_numpy(), ours.loc[theirs.index].to_numpy()).pvalue
    assert worse["p_value"] == pytest.approx(raw, rel=1e-9)
    assert worse["p_adjusted"] == pytest.approx(min(1.0, raw * 2), rel=1e-9)  # Holm, 2 runs


def test_table_marks_significant_differences(run_cli, runs):
    b, _ = runs
    r = run_cli("compare", A, b, TRUTH, "--name", "main", "--name", "shuffled", "-m", "ndcg@10")
    assert r.exit_code == 0
    first = r.stdout.splitlines()
    assert first[1].startswith("main (baseline)")
    assert "*" in first[2] and first[2].startswith("shuffled")
    assert "test: t" in r.stdout and "correction: holm" in r.stdout


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "wilcoxon"])
def test_other_tests_are_deterministic(run_cli, runs, test):
    b, _ = runs
    args = ["compare", A, b, TRUTH, "-m", "ndcg@10", "--test", test, "--rounds", "2000",
            "--seed", "9", "-f", "json"]
    one, two = run_cli(*args).json(), run_cli(*args).json()
    assert one["comparisons"] == two["comparisons"]
    assert one["comparisons"][0]["significant"]


def test_fail_if_worse_and_baseline_choice(run_cli, runs):
    b, c = runs
    gated = run_cli("compare", A, b, TRUTH, "--fail-if-worse", "-m", "ndcg@10")
    assert gated.exit_code == 1
    assert "FAILED b is worse than preds on ndcg@10" in gated.stderr
    flipped = run_cli("compare", A, b, TRUTH, "--baseline-run", "b", "--fail-if-worse",
                      "-m", "ndcg@10")
    assert flipped.exit_code == 0  # preds is better than b: not a failure
    same = run_cli("compare", A, c, TRUTH, "--fail-if-worse", "-m", "ndcg@10")
    assert same.exit_code == 0


def test_fail_if_worse_is_a_gate_every_report_states(run_cli, runs):
    """The exit code, the JSON's passed, the Markdown verdict and the library agree: a run
    significantly worse fails in each (it once failed only the exit code)."""
    from rankeval import compare

    b, c = runs
    for run, fails in ((b, True), (c, False)):
        args = ("compare", A, run, TRUTH, "--fail-if-worse", "-m", "ndcg@10,mrr@10", "-q")
        doc = run_cli(*args, "-f", "json")
        assert doc.exit_code == (1 if fails else 0)
        gate = [g for g in doc.json()["gates"] if g["kind"] == "fail_if_worse"]
        assert [g["passed"] for g in gate] == [not fails]
        assert doc.json()["passed"] is (not fails)
        assert gate[0]["run"] == run.stem and gate[0]["baseline_run"] == "preds"
        worse = {w["metric"] for w in gate[0]["worse"]}
        cells = {x["metric"] for x in doc.json()["comparisons"]
                 if x["significant"] and x["delta"] < 0}
        assert worse == cells and bool(worse) is fails
        first = run_cli(*args, "-f", "markdown").stdout.splitlines()[0]
        assert first == ("**rankeval: the gate failed** ❌" if fails
                         else "**rankeval: the gate passed** ✅"), first
        result = compare([A, run], TRUTH, "ndcg@10,mrr@10", fail_if_worse=True)
        assert result.passed is (not fails)
        assert [g.to_dict() for g in result.gates] == doc.json()["gates"]


def test_top_changes(run_cli, runs):
    b, _ = runs
    r = run_cli("compare", A, b, TRUTH, "--top-changes", "3", "-m", "ndcg@10", "-f", "json")
    changes = r.json()["top_changes"]["b"]["ndcg@10"]
    assert len(changes["hurt"]) == 3
    assert all(x["run"] < x["baseline"] for x in changes["hurt"])
    assert all(x["run"] > x["baseline"] for x in changes["helped"])


def test_markdown_and_csv(run_cli, runs):
    b, _ = runs
    md = run_cli("compare", A, b, TRUTH, "-m", "ndcg@10", "-f", "markdown")
    assert md.stdout.startswith("| run | ndcg@10 |")
    csv_text = run_cli("compare", A, b, TRUTH, "-m", "ndcg@10", "-f", "csv").stdout
    assert csv_text.splitlines()[0].startswith("run,metric,mean,baseline_mean,delta")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([A], "at least two runs"),
        ([A, A, "--baseline", "nope"], "is not a run name"),
        ([A, A, "--name", "x"], "1 run name for 2 runs: give one name per run"),
        ([A, A, "--alpha", "2"], "'--alpha': 2.0 is not in the range 0<x<1"),
        ([A, A, "--rounds", "10", "--test", "bootstrap"], "at least 100"),
    ],
)
def test_usage_errors(run_cli, args, needle):
    r = run_cli("compare", *args, TRUTH)
    assert r.exit_code == 2
    assert needle in r.stderr


def test_score_ci(run_cli):
    r = run_cli("score", A, TRUTH, "-m", "ndcg@10", "--ci", "--ci-rounds", "2000", "-f", "json",
                "--quiet")
    assert r.exit_code == 0
    report = r.json()
    low, high = report["ci"]["intervals"]["ndcg@10"]
    assert low < report["metrics"]["ndcg@10"] < high
    assert report["ci"]["level"] == 0.95
    again = run_cli("score", A, TRUTH, "-m", "ndcg@10", "--ci", "--ci-rounds", "2000", "-f",
                    "json", "--quiet")
    assert again.json()["ci"] == report["ci"]
    table = run_cli("score", A, TRUTH, "-m", "ndcg@10", "--ci", "--quiet")
    assert "[0." in table.stdout and "bootstrap confidence intervals" in table.stdout
    assert run_cli("score", A, TRUTH, "--ci", "--ci-level", "1.5").exit_code == 2


def test_users_one_run_does_not_evaluate_are_dropped_and_counted(run_cli, write):
    truth = write("t.csv", "user_id,item_id\nu1,A\nu2,B\nu3,C\n")
    a = write("a.csv", "user_id,item_id,rank\nu1,A,1\nu2,B,1\nu3,X,1\n")
    b = write("b.csv", "user_id,item_id,rank\nu1,X,1\nu2,B,1\n")  # no list for u3
    r = run_cli("compare", a, b, truth, "-m", "mrr@1", "--skip-missing-users", "-f", "json")
    assert r.exit_code == 0, r.stderr
    report = r.json()
    assert report["users"]["shared"] == 2
    assert [x["dropped_users"] for x in report["runs"]] == [1, 0]
    assert "1 user evaluated in a is left out" in r.stderr
    cell = report["comparisons"][0]
    assert cell["baseline_mean"] == 1.0 and cell["mean"] == 0.5  # over u1 and u2 only


def test_the_truth_comes_last_and_the_old_order_is_recognised(run_cli):
    new = run_cli("compare", A, A, TRUTH, "-m", "ndcg@10", "-f", "json")
    assert new.exit_code == 0, new.stderr
    old = run_cli("compare", TRUTH, A, A, "-m", "ndcg@10", "-f", "json")
    assert old.exit_code == 0
    assert "compare takes the truth last" in old.stderr
    assert old.json()["comparisons"] == new.json()["comparisons"]
    assert run_cli("compare", A, TRUTH).exit_code == 2  # one run is not a comparison
