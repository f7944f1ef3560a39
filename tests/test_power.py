"""Power, sample size and the false-discovery-rate corrections, against statsmodels and by
simulation (the share of significant results over synthetic samples)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

import rankeval
from rankeval.analysis.power import anova_users, simulated_power, t_mde, t_power, t_users
from rankeval.analysis.significance import correct

from .conftest import SAMPLE

PREDS, POPULAR, TRUTH = (str(SAMPLE / f) for f in ("preds.csv", "popular.csv", "truth.csv"))
STATSMODELS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "by": "fdr_by"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30),
       st.sampled_from(sorted(STATSMODELS)),
       st.lists(st.booleans(), min_size=30, max_size=30))
def test_corrections_equal_statsmodels(p, method, undefined):
    """Undefined tests (NaN) are left out of the family; the others are corrected as
    statsmodels corrects them alone."""
    values = [math.nan if u else x for x, u in zip(p, undefined, strict=False)]
    got = correct(values, method)
    defined = [x for x in values if not math.isnan(x)]
    if defined:
        want = iter(multipletests(defined, method=STATSMODELS[method])[1])
        for x, g in zip(values, got, strict=True):
            if math.isnan(x):
                assert math.isnan(g)
            else:
                assert g == pytest.approx(next(want), abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "larger", "smaller"])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
@pytest.mark.parametrize("n", [5, 60, 2000])
def test_t_power_mde_and_users_equal_statsmodels(alternative, alpha, power, n):
    tp = TTestPower()
    sign = -1 if alternative == "smaller" else 1
    for d in (0.02, 0.2, 0.9):
        want = tp.power(effect_size=sign * d, nobs=n, alpha=alpha, alternative=alternative)
        if math.isfinite(want):  # statsmodels answers NaN far in a tail
            assert t_power(sign * d, n, alpha, alternative) == pytest.approx(want, abs=1e-9)
    mde = t_mde(n, alpha, power, alternative)
    # statsmodels' own power function at our MDE and our user count gives the power asked
    # (to 1e-9); its solve_power stops earlier (its MDE is ours to about 1e-5 relative)
    assert tp.power(effect_size=sign * mde, nobs=n, alpha=alpha,
                    alternative=alternative) == pytest.approx(power, abs=1e-9)
    assert abs(mde) == pytest.approx(abs(tp.solve_power(
        effect_size=None, nobs=n, alpha=alpha, power=power, alternative=alternative)),
        rel=1e-4)
    users = t_users(0.15, alpha, power, alternative)
    if users > 2:
        assert tp.power(effect_size=sign * 0.15, nobs=users, alpha=alpha,
                        alternative=alternative) == pytest.approx(power, abs=1e-9)
    assert users == pytest.approx(tp.solve_power(effect_size=sign * 0.15, nobs=None,
                                                 alpha=alpha, power=power,
                                                 alternative=alternative), rel=1e-6)


def _per_user_files(tmp_path, run_cli):
    out = []
    for name, run in (("a", PREDS), ("b", POPULAR)):
        path = tmp_path / f"{name}.csv"
        r = run_cli("score", run, TRUTH, "-m", "ndcg@10,recall@10", "--per-user", str(path),
                    "-q", "-o", str(tmp_path / f"{name}.txt"))
        assert r.exit_code == 0, r.stderr
        out.append(path)
    return out


def test_power_on_per_user_files_equals_statsmodels(run_cli, tmp_path):
    a, b = _per_user_files(tmp_path, run_cli)
    run = run_cli("power", "--per-user-a", str(a), "--per-user-b", str(b), "--effect", "0.01",
                  "--alternative", "larger", "-f", "json")
    assert run.exit_code == 0, run.stderr
    doc = json.loads(run.stdout, parse_constant=lambda c: 1 / 0)
    import pandas as pd

    pa_, pb = pd.read_csv(a), pd.read_csv(b)
    tp = TTestPower()
    for row in doc["metrics"]:
        diff = (pb[row["metric"]] - pa_[row["metric"]]).to_numpy()
        n, sd = len(diff), float(np.std(diff, ddof=1))
        assert row["users"] == n and row["sd"] == pytest.approx(sd, rel=1e-12)
        mde = tp.solve_power(effect_size=None, nobs=n, alpha=0.05, power=0.8,
                             alternative="larger") * sd
        assert tp.power(effect_size=row["mde"] / sd, nobs=n, alpha=0.05,
                        alternative="larger") == pytest.approx(0.8, abs=1e-9)
        assert row["mde"] == pytest.approx(mde, rel=1e-4)
        achieved = tp.power(effect_size=0.01 / sd, nobs=n, alpha=0.05, alternative="larger")
        assert row["achieved"] == pytest.approx(achieved, abs=1e-6)
        need = tp.solve_power(effect_size=0.01 / sd, nobs=None, alpha=0.05, power=0.8,
                              alternative="larger")
        assert row["n_exact"] == pytest.approx(need, rel=1e-6)
        assert row["users_needed"] == math.ceil(need)


def test_power_from_runs_equals_power_from_their_per_user_files(run_cli, tmp_path):
    a, b = _per_user_files(tmp_path, run_cli)
    files = rankeval.power(per_user_a=str(a), per_user_b=str(b), effect="2%")
    runs = rankeval.power(PREDS, POPULAR, TRUTH, ["ndcg@10", "recall@10"], effect="2%")
    assert [r.to_dict() for r in files.rows] == [r.to_dict() for r in runs.rows]
    assert runs.runs == ("preds", "popular") and files.effect.relative


def test_the_computed_power_is_the_share_of_significant_samples():
    """Simulated experiments: users' differences drawn with the effect and spread asked;
    the share the t-test finds significant lies within its binomial interval."""
    rng = np.random.default_rng(3)
    n, sd, effect, rounds = 40, 0.2, 0.06, 4000
    samples = rng.normal(effect, sd, size=(rounds, n))
    t = samples.mean(axis=1) / (samples.std(axis=1, ddof=1) / math.sqrt(n))
    share = float(np.mean(np.abs(t) > sps.t.isf(0.025, n - 1)))
    expected = t_power(effect / sd, n, 0.05)
    assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / rounds)


def test_the_bootstrap_power_is_within_simulation_error_of_the_t_power():
    """On differences that are close to normal, resampling them gives the t-test's power."""
    diff = np.random.default_rng(5).normal(0.0, 0.3, size=3000)
    rounds = 3000
    for effect, n in ((0.05, 100), (0.02, 500)):
        expected = t_power(effect / 0.3, n, 0.05)
        got = simulated_power(diff, effect, n, 0.05, "two-sided", rounds, seed=1)
        assert abs(got - expected) < 4 * math.sqrt(expected * (1 - expected) / rounds) + 0.01


def test_bootstrap_users_needed_meet_the_power_and_one_fewer_does_not():
    zeros = np.where(np.random.default_rng(2).random(2000) < 0.6, 0.0,
                     np.random.default_rng(4).exponential(0.3, 2000))  # skewed, many zeros
    a = np.zeros_like(zeros)
    result = rankeval.power(per_user_a=_table(a), per_user_b=_table(zeros), effect=0.03,
                            method="bootstrap", rounds=1000, seed=0)
    (row,) = result.rows
    n = row.users_needed
    assert 2 < n < 100_000
    diff = zeros - a
    assert simulated_power(diff, 0.03, n, 0.05, "two-sided", 1000, 0) >= 0.8
    assert simulated_power(diff, 0.03, n - 1, 0.05, "two-sided", 1000, 0) < 0.8


def _table(values):
    import pyarrow as pa

    return pa.table({"user_id": [f"u{i}" for i in range(len(values))],
                     "ndcg@10": pa.array(values)})


def test_sakai_design_by_simulation():
    """M systems, two at the range's ends and the rest in the middle (the least favourable
    spread of a range D), residual variance s2: at the users computed a two-way ANOVA
    (systems x users) rejects with the power asked, and with fewer users it does not."""
    m, d, s2, rounds = 4, 0.05, 0.02, 2000
    n = anova_users(d, s2, m, 0.05, 0.8)
    assert n > 2
    rng = np.random.default_rng(11)
    means = np.array([-d / 2, d / 2] + [0.0] * (m - 2))

    def power_at(users: int) -> float:
        y = means + rng.normal(0, math.sqrt(s2), size=(rounds, users, m)) \
            + rng.normal(0, 0.1, size=(rounds, users, 1))  # user effects cancel out
        grand = y.mean(axis=(1, 2), keepdims=True)
        sys_means = y.mean(axis=1, keepdims=True)
        user_means = y.mean(axis=2, keepdims=True)
        ss_sys = users * ((sys_means - grand) ** 2).sum(axis=(1, 2))
        resid = y - sys_means - user_means + grand
        ss_res = (resid**2).sum(axis=(1, 2))
        df1, df2 = m - 1, (m - 1) * (users - 1)
        f = (ss_sys / df1) / (ss_res / df2)
        return float(np.mean(f > sps.f.isf(0.05, df1, df2)))

    err = 4 * math.sqrt(0.8 * 0.2 / rounds)
    assert power_at(n) >= 0.8 - err
    assert power_at(max(2, int(n * 0.8))) < 0.8


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "markdown", "html"])
def test_every_format(run_cli, fmt):
    run = run_cli("power", PREDS, POPULAR, TRUTH, "-m", "ndcg@10,map@10", "--effect", "1%",
                  "--systems", "5", "-f", fmt, "-q")
    assert run.exit_code == 0, run.stderr
    assert "ndcg@10" in run.stdout and "nan" not in run.stdout.lower().replace("nan-", "")
    if fmt == "json":
        doc = json.loads(run.stdout, parse_constant=lambda c: 1 / 0)
        assert [r["metric"] for r in doc["metrics"]] == ["ndcg@10", "map@10"]
        assert all(r["anova_users"] > 0 for r in doc["metrics"])


@pytest.mark.parametrize(("args", "message"), [
    (["--per-user-a", "x.csv"], "give --per-user-a and --per-user-b"),
    ([PREDS, TRUTH], "power takes RUN_A RUN_B TRUTH"),
    ([PREDS, POPULAR, TRUTH, "--effect", "-1"], "--effect '-1': an effect is a positive"),
    ([PREDS, POPULAR, TRUTH, "--effect", "a lot"], "expected a number (0.01) or a percent"),
    ([PREDS, POPULAR, TRUTH, "--power", "1"], "'--power': 1.0 is not in the range 0<x<1"),
    ([PREDS, POPULAR, TRUTH, "-m", "coverage@10", "--catalog", str(SAMPLE / "catalog.csv")],
     "power needs a per-user metric"),
])
def test_bad_requests_are_one_line(run_cli, args, message):
    run = run_cli("power", *args)
    assert run.exit_code == 2
    assert run.stderr.startswith("rankeval: error: ") and message in run.stderr, run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("names", [["a"], ["a", "b", "c"]])
def test_power_takes_a_name_per_run(run_cli, names):
    args = [x for name in names for x in ("--name", name)]
    r = run_cli("power", SAMPLE / "preds.csv", SAMPLE / "popular.csv", SAMPLE / "truth.csv",
                "-m", "ndcg@10", *args)
    assert r.exit_code == 2
    assert f"--name was given {len(names)} time" in r.stderr and "give it twice" in r.stderr
