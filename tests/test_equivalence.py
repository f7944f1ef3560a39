"""Non-inferiority and equivalence gates in compare: the bounds and p-values against scipy and
statsmodels' TOST, exit codes on constructed data where the answer is known."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from rankeval.analysis.equivalence import Margin, judge

from .conftest import SAMPLE

PREDS, POPULAR, TRUTH = (str(SAMPLE / f) for f in ("preds.csv", "popular.csv", "truth.csv"))


def _margin(kind: str, value: float, relative: bool = False) -> Margin:
    return Margin(kind, "ndcg@10", value, relative, f"ndcg@10={value}")


@pytest.mark.parametrize("seed", range(6))
def test_tost_and_non_inferiority_equal_statsmodels_and_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 400))
    a = rng.random(n)
    b = a + rng.normal(rng.normal(0, 0.02), 0.1, n)
    delta, alpha = 0.03, 0.05
    eq = judge(_margin("equivalent", delta), "b", a, b, alpha)
    p, (_, p1, _), (_, p2, _) = ttost_paired(b, a, -delta, delta)
    assert p == max(p1, p2)  # TOST: the larger of the two one-sided p-values
    assert eq.p_value == pytest.approx(p, abs=1e-12)
    assert eq.passed == (p < alpha)
    ni = judge(_margin("non_inferior", delta), "b", a, b, alpha)
    want = stats.ttest_1samp(b - a + delta, 0.0, alternative="greater")
    assert ni.p_value == pytest.approx(want.pvalue, abs=1e-12) == pytest.approx(p1, abs=1e-12)
    low = stats.ttest_1samp(b - a, 0.0, alternative="greater").confidence_interval(1 - alpha).low
    assert ni.low == pytest.approx(low, abs=1e-12)
    assert ni.passed == (low > -delta) == (want.pvalue < alpha)


def test_users_to_show_is_where_the_bound_clears_the_margin():
    rng = np.random.default_rng(1)
    a = rng.random(30)
    b = a + rng.normal(0.004, 0.05, 30)  # a little better, noisy, few users
    v = judge(_margin("non_inferior", 0.01), "b", a, b, 0.05)
    assert not v.passed and v.users_to_show > 30
    d = b - a
    mean, sd = d.mean(), d.std(ddof=1)

    def bound(n):
        return mean - stats.t.isf(0.05, n - 1) * sd / math.sqrt(n)

    assert bound(v.users_to_show) > -0.01 >= bound(v.users_to_show - 1)
    assert f"about {v.users_to_show:,} users would show it" in v.message()


def test_a_difference_outside_the_margin_is_not_a_matter_of_users():
    a = np.linspace(0, 1, 50)
    v = judge(_margin("non_inferior", 0.01), "b", a, a - 0.05, 0.05)
    assert not v.passed and v.users_to_show is None
    assert "more users would not show it" in v.message()


def test_a_relative_margin_is_a_share_of_the_baseline_mean():
    a = np.full(100, 0.5) + np.linspace(-0.1, 0.1, 100)
    v = judge(_margin("non_inferior", 0.02, relative=True), "b", a, a - 0.005, 0.05)
    assert v.margin_abs == pytest.approx(0.01) and v.passed  # 2% of 0.5; moved by 0.005


def test_compare_gates_exit_codes_and_json(run_cli, tmp_path):
    same = run_cli("compare", PREDS, PREDS, TRUTH, "-m", "ndcg@10", "--non-inferior",
                   "ndcg@10=0.001", "--equivalent", "ndcg@10=0.001", "-f", "json", "-q")
    assert same.exit_code == 0, same.stderr
    doc = json.loads(same.stdout)
    assert doc["passed"] and [g["kind"] for g in doc["gates"]] == ["non_inferior", "equivalent"]
    worse = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "--non-inferior",
                    "ndcg@10=1%")
    assert worse.exit_code == 1
    assert "rankeval: FAILED popular ndcg@10 not worse than preds by more than " \
           "0.003391 (1%): difference -0.0932, lower bound -0.1185" in worse.stderr
    config = tmp_path / "rankeval.toml"
    config.write_text('non_inferior = ["ndcg@10=1%"]\n')
    from_config = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "--config",
                          str(config), "-q")
    assert from_config.exit_code == 1 and "FAILED popular ndcg@10" in from_config.stderr
    md = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", "--non-inferior",
                 "ndcg@10=1%", "-f", "markdown", "-q").stdout
    assert md.startswith("**rankeval: the gate failed** ❌")


@pytest.mark.parametrize(("args", "message"), [
    (["--non-inferior", "map@10=0.01"], "map@10 is not computed by this run"),
    (["--equivalent", "ndcg@10"], "expected METRIC=MARGIN"),
    (["--non-inferior", "ndcg@10=-1"], "a margin is a positive number"),
    (["--non-inferior", "coverage@10=0.01", "-m", "coverage@10", "--catalog",
      str(SAMPLE / "catalog.csv")], "a corpus-level metric has one value per run"),
])
def test_bad_gates_are_one_line_and_exit_2(run_cli, args, message):
    run = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10", *args)
    assert run.exit_code == 2
    assert run.stderr.strip().splitlines()[-1].startswith("rankeval: error: ")
    assert message in run.stderr and "Traceback" not in run.stderr


def test_min_effect_marks_small_significant_differences(run_cli):
    args = ["compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10,recall@10", "-q"]
    plain = json.loads(run_cli(*args, "-f", "json").stdout)
    assert {c["metric"]: c["below_min_effect"] for c in plain["comparisons"]} == {
        "ndcg@10": None, "recall@10": None}
    marked = run_cli(*args, "--min-effect", "ndcg@10=0.1", "--fail-if-worse")
    assert marked.exit_code == 0  # significantly worse, but by less than what matters
    assert "0.2459 -0.0932~" in marked.stdout and "~ significant but below" in marked.stdout
    doc = json.loads(run_cli(*args, "--min-effect", "10%", "-f", "json").stdout)
    cells = {c["metric"]: c for c in doc["comparisons"]}
    assert cells["ndcg@10"]["below_min_effect"] is False  # 0.0932 > 10% of 0.3391
    assert cells["recall@10"]["below_min_effect"] is False  # not significant: not small
    assert run_cli(*args, "--min-effect", "ndcg@10=0.05", "--fail-if-worse").exit_code == 1
    bad = run_cli(*args, "--min-effect", "map@5=0.1")
    assert bad.exit_code == 2 and "map@5 is not computed" in bad.stderr


def test_a_notice_when_so_many_users_that_p_says_nothing(run_cli, tmp_path):
    rng = np.random.default_rng(0)
    users = 30_000
    ids = [f"u{i}" for i in range(users)]
    truth = tmp_path / "t.csv"
    truth.write_text("user_id,item_id,relevance\n"
                     + "".join(f"{u},i{i % 7},1\n" for i, u in enumerate(ids)))
    top = rng.random(users) < 0.5  # the relevant item on top or not
    for name, flip in (("a", 0.0), ("b", 0.02)):  # B moves 2% of the users
        first = top ^ (rng.random(users) < flip)
        rows = [f"{u},i{(i % 7) if hit else 99},1\n" for i, (u, hit) in
                enumerate(zip(ids, first, strict=True))]
        (tmp_path / f"{name}.csv").write_text("user_id,item_id,rank\n" + "".join(rows))
    run = run_cli("compare", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), str(truth),
                  "-m", "hit_rate@1", "-f", "json")
    doc = json.loads(run.stdout)
    (line,) = [w for w in doc["warnings"] if "four times in five" in w]
    assert line.startswith("hit_rate@1: with 30,000 users compared, a difference of 0.0")
    assert "--min-effect marks the differences too small to matter" in run.stderr


def test_score_gates_against_a_baseline_per_user_file_equal_compare(run_cli, tmp_path):
    base = tmp_path / "base.csv"
    assert run_cli("score", PREDS, TRUTH, "-m", "ndcg@10,recall@10", "--per-user", str(base),
                   "-q", "-o", str(tmp_path / "x.txt")).exit_code == 0
    gates = ["--non-inferior", "recall@10=0.05", "--equivalent", "ndcg@10=0.2"]
    score = run_cli("score", POPULAR, TRUTH, "-m", "ndcg@10,recall@10", "--baseline-per-user",
                    str(base), *gates, "-f", "json", "-q", "--junit", str(tmp_path / "j.xml"))
    compare = run_cli("compare", PREDS, POPULAR, TRUTH, "-m", "ndcg@10,recall@10", *gates,
                      "-f", "json", "-q")
    assert score.exit_code == compare.exit_code == 0, score.stderr
    mine = json.loads(score.stdout)["gates"]
    theirs = json.loads(compare.stdout)["gates"]
    keys = ("kind", "metric", "margin", "users", "difference", "low", "high", "p_value",
            "passed")
    assert [{k: g[k] for k in keys} for g in mine] == [{k: g[k] for k in keys} for g in theirs]
    junit = (tmp_path / "j.xml").read_text()
    assert junit.count("<testcase") == 2 and 'classname="rankeval.non_inferior"' in junit
    md = run_cli("score", POPULAR, TRUTH, "-m", "ndcg@10,recall@10", "--baseline-per-user",
                 str(base), *gates, "-f", "markdown", "-q").stdout
    assert md.startswith("**rankeval: all 2 gates passed** ✅")
    failing = run_cli("score", POPULAR, TRUTH, "-m", "ndcg@10", "--baseline-per-user",
                      str(base), "--non-inferior", "ndcg@10=0.01")
    assert failing.exit_code == 1 and "FAILED this run ndcg@10 not worse" in failing.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--non-inferior", "ndcg@10=0.01"], "need --baseline-per-user FILE"),
    (["--baseline-per-user", "x.csv"], "--baseline-per-user is for --non-inferior"),
    (["--baseline-per-user", TRUTH, "--non-inferior", "ndcg@10=0.01"],
     "ndcg@10 not in both per-user files"),
])
def test_score_margin_gates_refuse_bad_requests(run_cli, args, message):
    run = run_cli("score", POPULAR, TRUTH, "-m", "ndcg@10", *args)
    assert run.exit_code == 2 and message in run.stderr, run.stderr
    assert run.stderr.strip().splitlines()[-1].startswith("rankeval: error: ")
