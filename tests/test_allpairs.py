"""compare --all-pairs: randomised Tukey HSD against the exact enumeration, corrections over all
pairs against statsmodels, and the compact letter display on patterns with known groups."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from rankeval.analysis.allpairs import letters, randomized_tukey

from .conftest import SAMPLE

TRUTH = str(SAMPLE / "truth.csv")


def _brute_force(x: np.ndarray) -> np.ndarray:
    """Every assignment of each user's values to the systems, one by one."""
    n, m = x.shape
    means = x.mean(axis=0)
    observed = np.abs(means[:, None] - means[None, :])
    reached, total = np.zeros((m, m)), 0
    for combo in itertools.product(itertools.permutations(range(m)), repeat=n):
        permuted = np.array([x[u, list(c)] for u, c in enumerate(combo)]).mean(axis=0)
        reached += (permuted.max() - permuted.min()) >= observed - 1e-12
        total += 1
    return reached / total


@pytest.mark.parametrize("seed", range(4))
def test_randomised_tukey_equals_the_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    x = rng.random((3, 3)).round(2)
    x[:, 1] += 0.3 * seed  # from no difference to a clear one
    p, exact = randomized_tukey(x, 10_000, 0)
    assert exact
    want = _brute_force(x)
    np.fill_diagonal(want, np.nan)
    np.testing.assert_allclose(p, want, atol=1e-12)


def test_sampled_permutations_approach_the_exact_values():
    rng = np.random.default_rng(7)
    x = rng.random((4, 4))
    x[:, 0] += 0.4
    exact, _ = randomized_tukey(x, 10**6, 0)  # 24^4 = 331,776 permutations: all of them
    sampled, was_exact = randomized_tukey(x, 20_000, 1)
    assert not was_exact
    mask = ~np.isnan(exact)
    assert np.abs(sampled[mask] - exact[mask]).max() < 0.02


@pytest.mark.parametrize(("differ", "want"), [
    ([], ["a", "a", "a"]),
    ([(0, 1), (0, 2)], ["a", "b", "b"]),
    ([(0, 2)], ["a", "ab", "b"]),
    ([(0, 1), (0, 2), (0, 3), (1, 3)], ["a", "b", "bc", "c"]),
    ([(i, j) for i, j in itertools.combinations(range(4), 2)], ["a", "b", "c", "d"]),
])
def test_compact_letter_display(differ, want):
    m = len(want)
    significant = np.zeros((m, m), dtype=bool)
    for i, j in differ:
        significant[i, j] = significant[j, i] = True
    got = letters(significant)
    assert got == want
    for i, j in itertools.combinations(range(m), 2):  # the display's contract
        assert bool(set(got[i]) & set(got[j])) == (not significant[i, j])


@pytest.fixture(scope="module")
def five_runs(tmp_path_factory):
    """The sample run and four others: its lists reshuffled a little or a lot."""
    root = tmp_path_factory.mktemp("runs")
    base = pd.read_csv(SAMPLE / "preds.csv", dtype={"user_id": str, "item_id": str})
    paths = []
    for k, noise in enumerate((0.0, 0.05, 0.3, 1.0, 3.0)):
        rng = np.random.default_rng(k)
        run = base.copy()
        run["score"] = run["score"] + rng.normal(0, noise, len(run)) if noise else run["score"]
        run = run.drop(columns="rank")
        path = root / f"run{k}.csv"
        run.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def test_all_pairs_with_five_runs_prints_the_matrix_and_groups(run_cli, five_runs):
    run = run_cli("compare", *five_runs, TRUTH, "-m", "ndcg@10", "--all-pairs", "--rounds",
                  "2000", "-q")
    assert run.exit_code == 0, run.stderr
    assert "all pairs on ndcg@10 (randomised Tukey HSD, 2,000 permutations; 298 users)" \
        in run.stdout
    doc = json.loads(run_cli("compare", *five_runs, TRUTH, "-m", "ndcg@10", "--all-pairs",
                             "--rounds", "2000", "-f", "json", "-q").stdout)
    (pairs,) = doc["all_pairs"]
    assert sorted(pairs["runs"]) == [f"run{k}" for k in range(5)]
    assert pairs["means"] == sorted(pairs["means"], reverse=True)
    for run_name in pairs["runs"]:
        assert f"{run_name} " in run.stdout and pairs["groups"][run_name]
    # the groups agree with the significance matrix
    for i, j in itertools.combinations(range(5), 2):
        shared = set(pairs["groups"][pairs["runs"][i]]) & set(pairs["groups"][pairs["runs"][j]])
        assert bool(shared) == (not pairs["significant"][i][j])


@pytest.mark.parametrize("correction", ["bh", "by", "holm", "bonferroni"])
def test_all_pairs_with_a_correction_equal_statsmodels(run_cli, five_runs, tmp_path,
                                                        correction):
    per_user = tmp_path / "u.csv"
    doc = json.loads(run_cli("compare", *five_runs, TRUTH, "-m", "ndcg@10", "--all-pairs",
                             "--correction", correction, "--per-user", str(per_user),
                             "-f", "json", "-q").stdout)
    (pairs,) = doc["all_pairs"]
    assert pairs["procedure"] == correction
    values = pd.read_csv(per_user)
    runs = pairs["runs"]
    index = list(itertools.combinations(range(5), 2))
    raw = [stats.ttest_rel(values[f"{runs[j]}/ndcg@10"], values[f"{runs[i]}/ndcg@10"]).pvalue
           for i, j in index]
    method = {"bh": "fdr_bh", "by": "fdr_by"}.get(correction, correction)
    want = multipletests(raw, method=method)[1]
    for (i, j), q in zip(index, want, strict=True):
        assert pairs["p_adjusted"][i][j] == pytest.approx(q, abs=1e-9)
        assert pairs["p_adjusted"][j][i] == pairs["p_adjusted"][i][j]


@pytest.mark.parametrize("fmt", ["markdown", "csv", "html"])
def test_all_pairs_in_every_format(run_cli, five_runs, fmt):
    run = run_cli("compare", *five_runs[:3], TRUTH, "-m", "ndcg@10", "--all-pairs",
                  "--rounds", "500", "-f", fmt, "-q")
    assert run.exit_code == 0, run.stderr
    if fmt == "markdown":
        assert "| run | mean | group |" in run.stdout
    elif fmt == "csv":
        assert sum("[vs run" in line for line in run.stdout.splitlines()) == 3
    else:
        assert 'id="all-pairs"' in run.stdout and 'id="chart-pairs-ndcg-10"' in run.stdout
