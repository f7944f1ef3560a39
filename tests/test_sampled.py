"""Sampled metrics and their corrections (#31, Krichene and Rendle 2020): the tables by their
definition, computed here with loops; the estimates against brute-force full rankings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rankeval.analysis.sampled import estimate, metric, table


def _pmf(n: int, m: int, replacement: bool) -> np.ndarray:
    """P(sampled rank r | true rank R) by counting: binomial or hypergeometric."""
    out = np.zeros((n, m + 1))
    for big_r in range(1, n + 1):
        above, below = big_r - 1, n - big_r
        for j in range(m + 1):
            if replacement:
                p = above / (n - 1)
                out[big_r - 1, j] = math.comb(m, j) * p**j * (1 - p) ** (m - j)
            elif j <= above and m - j <= below:
                out[big_r - 1, j] = math.comb(above, j) * math.comb(below, m - j) / math.comb(
                    n - 1, m)
    return out


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("name, k", [("hit_rate", 1), ("hit_rate", 3), ("ndcg", None),
                                     ("mrr", 5), ("auc", None), ("precision", 2)])
def test_tables_are_their_definitions(name, k, replacement):
    """gamma=1: the posterior mean of the metric given the sampled rank; gamma=0: the least
    squares fit of the metric by the expected table value over the true ranks; a gamma in
    between minimises bias^2 + gamma variance, which no nearby table beats."""
    n, m = 11, 3
    pmf = _pmf(n, m, replacement)
    truth = metric(name, k, np.arange(1, n + 1), n)
    posterior = (pmf * truth[:, None]).sum(axis=0) / pmf.sum(axis=0)
    got = table(name, k, n, m, "bv", 1.0, replacement)
    assert got == pytest.approx(posterior, abs=1e-12)
    least = np.linalg.lstsq(pmf, truth, rcond=None)[0]
    assert table(name, k, n, m, "bv", 0.0, replacement) == pytest.approx(least, abs=1e-9)

    def loss(t: np.ndarray, gamma: float) -> float:
        mean = pmf @ t
        var = pmf @ t**2 - mean**2
        return float(((mean - truth) ** 2 + gamma * var).mean())

    best = table(name, k, n, m, "bv", 0.3, replacement)
    rng = np.random.default_rng(0)
    for _ in range(50):
        assert loss(best, 0.3) <= loss(best + rng.normal(0, 0.01, m + 1), 0.3) + 1e-15


def _hypergeometric(above: np.ndarray, pool: int, m: int) -> np.ndarray:
    """The law without replacement as it was computed before it was windowed (#49): whole
    rows, C(m, k) [K]_k [M-K]_(m-k) / [M]_m as sums of logs (scipy's hypergeom, whose time
    grows with the pool, takes minutes here; tests/test_bounds.py holds both to it)."""
    from scipy.special import gammaln

    big_k, big_m = above[:, None], float(pool)
    i = np.arange(m, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore"):
        hits = np.log(np.maximum(big_k - i, 0.0) / (big_m - m + 1 + i))
        misses = np.log1p(-np.minimum(big_k / (big_m - i), 1.0))
    zero = np.zeros((len(above), 1))
    log_p = np.concatenate([zero, np.cumsum(hits, axis=1)], axis=1)
    log_p += np.concatenate([zero, np.cumsum(misses, axis=1)], axis=1)[:, ::-1]
    k = np.arange(m + 1)
    log_p += (gammaln(m + 1) - gammaln(k + 1) - gammaln(m - k + 1))[None, :]
    return np.exp(log_p)


def _dense_table(name: str, k: int | None, n: int, m: int, gamma: float,
                 replacement: bool) -> np.ndarray:
    """The bias-variance table as it was computed before (#49): the law over the prior's
    every rank, dense, and least squares."""
    from scipy.stats import binom

    from rankeval.analysis.sampled import _ranks

    ranks, prior = _ranks(n)
    if replacement:
        pmf = binom.pmf(np.arange(m + 1)[None, :], m, (ranks[:, None] - 1) / (n - 1))
    else:
        pmf = _hypergeometric(ranks - 1, n - 1, m)
    a = np.sqrt(prior)[:, None] * pmf
    b = np.sqrt(prior) * metric(name, k, ranks, n)
    lhs = (1 - gamma) * (a.T @ a) + gamma * np.diag(prior @ pmf)
    return np.linalg.lstsq(lhs, a.T @ b, rcond=None)[0]


@pytest.mark.parametrize(("n", "m", "replacement"), [
    (400, 50, False), (1682, 100, True), (3706, 999, False), (3706, 999, True),
    (30_000, 60, False)])  # 30,000: past EXACT, the prior's grid
def test_the_windowed_table_is_the_dense_one(n, m, replacement):
    """Each row of the law kept on a window around its mode (all but 1e-20 of its mass)
    gives the tables the whole law gives, for every metric and both ends of gamma."""
    for name, k in (("ndcg", 10), ("mrr", None), ("auc", None), ("hit_rate", 1)):
        for gamma in (0.1, 1.0):
            want = _dense_table(name, k, n, m, gamma, replacement)
            got = table(name, k, n, m, "bv", gamma, replacement)
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10,
                                       err_msg=f"{name}@{k} gamma={gamma}")


def test_krichene_rendle_worked_numbers():
    """n = 11 candidates, m = 2 negatives with replacement (the paper's model)."""
    assert table("hit_rate", 1, 11, 2, "bv", 1.0, True) == pytest.approx(
        [1 / 3.85, 0, 0], abs=1e-6)
    assert table("ndcg", None, 11, 2, "bv", 0.1, True) == pytest.approx(
        [0.790192, 0.195106, 0.295173], abs=1e-6)
    ranks = {"x": np.array([1, 2, 3])}
    result = estimate(ranks, [("ndcg", None)], 11, 2, 0.1, replacement=True)
    values = result.runs[0].values["ndcg"]
    assert values["sampled"] == pytest.approx(0.710310, abs=1e-6)
    assert values["rank_estimate"] == pytest.approx(0.545050, abs=1e-6)
    assert values["bv"] == pytest.approx(0.426824, abs=1e-6)


def test_every_negative_sampled_is_the_full_ranking():
    """Without replacement and m = n - 1 the sampled list is the catalogue: every estimator
    gives the metric of the true ranks."""
    n = 9
    r = np.array([1, 4, 9, 2])
    result = estimate({"x": r}, [("ndcg", 5), ("auc", None)], n, n - 1, 0.1)
    for label, want in (("ndcg@5", metric("ndcg", 5, r, n).mean()),
                        ("auc", metric("auc", None, r, n).mean())):
        for how, value in result.runs[0].values[label].items():
            assert value == pytest.approx(want, abs=1e-9), (label, how)


def test_corrections_approach_the_full_ranking():
    """Brute force: a model's full ranking of 400 candidates per held-out item, negatives
    sampled without replacement; the corrected estimates of hit_rate@10 and ndcg@10 lie
    nearer the full-ranking metric than the sampled one, and sampled AUC is unbiased."""
    rng = np.random.default_rng(7)
    n, m, instances = 400, 40, 3000
    true_rank = np.minimum(rng.geometric(0.02, instances), n)  # a good model, skewed ranks
    sampled = np.empty(instances, dtype=np.int64)
    for i, big_r in enumerate(true_rank):
        negatives = rng.choice(n - 1, size=m, replace=False)  # 0..R-2: the items above
        sampled[i] = 1 + int((negatives < big_r - 1).sum())
    metrics = [("hit_rate", 10), ("ndcg", 10), ("auc", None)]
    result = estimate({"model": sampled}, metrics, n, m, 0.1)
    values = result.runs[0].values
    for name, k in metrics[:2]:
        label = f"{name}@{k}"
        full = metric(name, k, true_rank, n).mean()
        sampled_error = abs(values[label]["sampled"] - full)
        for how in ("rank_estimate", "bv"):
            assert abs(values[label][how] - full) < sampled_error / 2, (label, how)
    full_auc = metric("auc", None, true_rank, n)
    se = full_auc.std() / math.sqrt(instances)
    assert abs(values["auc"]["sampled"] - full_auc.mean()) < 4 * se


def test_the_command_line(run_cli, tmp_path):
    """Every format carries the estimates; a correction that reverses two runs' order is a
    warning; ranks outside 1..m+1 and a missing option are one line, exit 2."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": ["i", "j", "k"],
                  "rank": [1, 2, 3]}).to_csv(a, index=False)
    pd.DataFrame({"user_id": ["u1", "u2", "u3"], "item_id": ["i", "j", "k"],
                  "rank": [2, 2, 1]}).to_csv(b, index=False)
    args = [a, b, "--candidates", "11", "--negatives", "2", "--sampling", "with", "-m",
            "ndcg", "-k", "10"]
    r = run_cli("sampled", *args, "-f", "json")
    assert r.exit_code == 0, r.stderr
    doc = r.json()
    assert doc["runs"][0]["values"]["ndcg@10"]["sampled"] == pytest.approx(0.710310, abs=1e-6)
    assert doc["flips"] == []  # these two keep their order
    for fmt, text in (("csv", "run,metric,sampled"), ("markdown", "Sampled metrics of"),
                      ("table", "rank estimate"), ("html", "<h2>Sampled metrics of")):
        r = run_cli("sampled", *args, "-f", fmt, "-q")
        assert r.exit_code == 0 and text in r.stdout, r.stderr
    pd.DataFrame({"user_id": ["u1"], "item_id": ["i"], "rank": [7]}).to_csv(
        tmp_path / "bad.csv", index=False)
    r = run_cli("sampled", tmp_path / "bad.csv", "--candidates", "11", "--negatives", "2")
    assert r.exit_code == 2 and "must lie in 1..3" in r.stderr
    assert r.stderr.count("\n") == 1
    named = tmp_path / "named.csv"
    pd.read_csv(a).rename(columns={"rank": "rank_among_sampled"}).to_csv(named, index=False)
    r = run_cli("sampled", named, *args[2:], "-f", "json")
    assert r.json()["runs"][0]["values"] == doc["runs"][0]["values"]
    r = run_cli("sampled", a, "--negatives", "2")
    assert r.exit_code == 2 and "--candidates" in r.stderr


def test_a_reversed_order_is_found_and_warned(run_cli, tmp_path):
    """Run A puts half its items first and half last among 11; run B puts every item 10th.
    Sampled hit_rate@10 prefers B (1.0 against 0.5); among 1,000 candidates an item 10th of
    11 is about 900th, so the corrections prefer A."""
    ranks = {"A": np.array([1, 1, 11, 11]), "B": np.array([10, 10, 10, 10])}
    result = estimate(ranks, [("hit_rate", 10)], 1000, 10)
    assert {(a, b, how) for _, a, b, how in result.flips} == {("A", "B", "rank_estimate"),
                                                              ("A", "B", "bv")}
    paths = []
    for name, r in ranks.items():
        paths.append(tmp_path / f"{name}.csv")
        pd.DataFrame({"user_id": [f"u{i}" for i in range(4)], "item_id": "x",
                      "rank": r}).to_csv(paths[-1], index=False)
    out = run_cli("sampled", *paths, "--name", "A", "--name", "B", "--candidates", "1000",
                  "--negatives", "10", "-m", "hit_rate", "-k", "10")
    assert out.exit_code == 0, out.stderr
    assert ("hit_rate@10: A and B swap places under the rank estimate and the bv corrections"
            in out.stderr)
    assert "Orders the corrections reverse" in out.stdout
