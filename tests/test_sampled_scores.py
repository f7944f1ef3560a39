"""``rankeval sampled --truth`` (#31): the sampled rank of each held-out item computed from the
scores of its user's held-out items and sampled negatives, checked by brute force (counting,
and every order of a tie), and the estimates equal to those of the ranks written out."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.analysis.sampled import metric, table
from rankeval.errors import InputError, OptionError


def _scores(seed: int, users: int = 60, m: int = 9, held: tuple[int, int] = (1, 3),
            levels: int | None = None):
    """Per user 1-2 held-out items and m negatives, with scores (integers from ``levels``
    values: ties), and the truth naming the held-out items (plus a judged non-relevant
    negative here and there, which stays a negative)."""
    rng = np.random.default_rng(seed)
    run, truth = [], []
    for u in range(users):
        n_held = int(rng.integers(*held))
        items = rng.choice(1000, size=n_held + m, replace=False)
        scores = (rng.integers(0, levels, len(items)) if levels
                  else rng.normal(size=len(items)))
        run += [(f"u{u}", f"i{x}", float(s)) for x, s in zip(items, scores, strict=True)]
        truth += [(f"u{u}", f"i{x}", 1) for x in items[:n_held]]
        if rng.random() < 0.3:
            truth.append((f"u{u}", f"i{items[-1]}", 0))
    return (pd.DataFrame(run, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


def _brute(run: pd.DataFrame, truth: pd.DataFrame) -> list[list[int]]:
    """Per held-out item (in run order): every sampled rank over all orders of its ties."""
    held = set(map(tuple, truth[truth.relevance > 0][["user_id", "item_id"]].to_numpy()))
    out = []
    for u, i, s in run.itertuples(index=False):
        if (u, i) not in held:
            continue
        mine = run[(run.user_id == u)]
        negatives = [x for x in mine.itertuples(index=False) if (u, x.item_id) not in held]
        above = sum(x.score > s for x in negatives)
        tied = [x.item_id for x in negatives if x.score == s]
        ranks = []
        for order in itertools.permutations([i, *tied]):  # every order of the tie
            ranks.append(1 + above + order.index(i))
        out.append(ranks)
    return out


@pytest.mark.parametrize("seed, levels", [(1, None), (2, 4), (3, 3)])
def test_sampled_ranks_by_brute_force(seed, levels):
    """With ties expected: the mean of every metric over every order of each tie;
    optimistic and pessimistic: the best and the worst order."""
    run, truth = _scores(seed, users=25, m=5, levels=levels)
    brute = _brute(run, truth)
    metrics = [("hit_rate", 2), ("ndcg", 3), ("mrr", 6), ("auc", None)]
    n = 200
    got = {t: rankeval.sampled(run, n, truth=truth, metrics=[x for x, _ in metrics],
                               k=[2, 3, 6], ties=t) for t in ("expected", "optimistic",
                                                              "pessimistic")}
    for name, k in metrics:
        label = name if k is None else f"{name}@{k}"
        for t, pick in (("expected", None), ("optimistic", min), ("pessimistic", max)):
            # each item's ranks over the orders of its tie (or the best or worst one)
            per = [np.array(r if pick is None else [pick(r)]) for r in brute]
            for how in ("sampled", "rank_estimate", "bv"):
                values = table(name, k, n, 5, how, 0.1)  # its own tests: test_sampled.py
                want = float(np.mean([values[r - 1].mean() for r in per]))
                have = got[t].runs[0].values[label][how]
                assert have == pytest.approx(want, abs=1e-12), (t, label, how)
    assert any(len(r) > 1 for r in brute) or levels is None


def test_scores_give_the_ranks_written_out(run_cli, tmp_path):
    """Without ties: the estimates of the scores and the truth equal those of a rank file
    holding each held-out item's sampled rank; from the CLI and the library alike, in
    every format of input."""
    run, truth = _scores(4, users=80, m=9)
    ranks = [r[0] for r in _brute(run, truth)]
    held = run.merge(truth[truth.relevance > 0], on=["user_id", "item_id"])
    written = held[["user_id", "item_id"]].assign(rank=ranks)
    a = rankeval.sampled(run, 500, truth=truth, metrics="hit_rate,ndcg,auc", k=[5, 10])
    b = rankeval.sampled(written, 500, 9, metrics="hit_rate,ndcg,auc", k=[5, 10])
    assert a.negatives == 9 and a.runs[0].instances == len(written)
    for label, by in a.runs[0].values.items():
        assert by == pytest.approx(b.runs[0].values[label], abs=1e-12), label
    run.to_parquet(tmp_path / "run.parquet", index=False)
    truth.to_csv(tmp_path / "truth.tsv", sep="\t", index=False)
    out = run_cli("sampled", tmp_path / "run.parquet", tmp_path / "truth.tsv",
                  "--candidates", "500", "-m", "hit_rate,ndcg,auc", "-k", "5,10", "-f", "json")
    assert out.exit_code == 0, out.stderr
    doc = out.json()
    assert doc["negatives"] == 9 and doc["ties"] == "expected"
    for label, by in a.runs[0].values.items():
        for how, value in by.items():
            assert doc["runs"][0]["values"][label][how] == pytest.approx(value, abs=1e-12)


def test_a_full_ranking_through_sampled_negatives():
    """Brute force end to end: a model scores all 300 candidates; each user's negatives are
    sampled from them; the corrected estimates from the scores land nearer the full-ranking
    hit rate than the sampled one."""
    rng = np.random.default_rng(9)
    n, m, users = 300, 30, 1500
    rows, truth, full = [], [], []
    for u in range(users):
        scores = rng.normal(size=n)
        item = int(rng.integers(n))
        scores[item] += 2.0  # a good model: the held-out item usually high
        full.append(1 + int((scores > scores[item]).sum()))
        negatives = rng.choice(np.delete(np.arange(n), item), size=m, replace=False)
        rows += [(u, int(x), float(scores[x])) for x in [item, *negatives]]
        truth.append((u, item, 1))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    gold = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    result = rankeval.sampled(run, n, truth=gold, metrics="hit_rate", k=10)
    values = result.runs[0].values["hit_rate@10"]
    want = float(metric("hit_rate", 10, np.array(full), n).mean())
    assert abs(values["bv"] - want) < abs(values["sampled"] - want) / 2
    assert abs(values["rank_estimate"] - want) < abs(values["sampled"] - want) / 2


@pytest.mark.parametrize("case, expected", [
    ("unscored", "held-out items have no row in"),
    ("uneven", "users have different numbers of sampled negatives"),
    ("repeat", "(user, item) row given more than once"),
    ("disagree", "9 sampled negatives per held-out item here, but 5 given"),
    ("no_score", "no score or rank column"),
])
def test_bad_inputs_are_one_line(run_cli, tmp_path, case, expected):
    run, truth = _scores(5, users=20, m=9)
    extra: list[str] = []
    if case == "unscored":
        run = run[~run.item_id.isin(truth.item_id[truth.relevance > 0].iloc[:1])]
    elif case == "uneven":
        run = run.drop(index=run.index[(run.user_id == "u3")
                                       & ~run.item_id.isin(truth.item_id)][0])
    elif case == "repeat":
        run = pd.concat([run, run.iloc[:1]])
    elif case == "disagree":
        extra = ["--negatives", "5"]
    elif case == "no_score":
        run = run.drop(columns="score")
    run.to_csv(tmp_path / "run.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    out = run_cli("sampled", tmp_path / "run.csv", tmp_path / "truth.csv",
                  "--candidates", "300", *extra)
    assert out.exit_code == 2, out.stdout
    assert expected in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_users_without_a_held_out_item_are_said():
    run, truth = _scores(6, users=10, m=4)
    truth = truth[truth.user_id != "u0"]
    result = rankeval.sampled(run, 100, truth=truth, k=5)
    assert result.warnings == ["run-1: 1 user with scores but no held-out item in the truth "
                               "is not an instance"]
    assert "SampledResult(1 run(s), 4 negatives of 100 candidates)" in repr(result)
    with pytest.raises(OptionError, match="negatives is needed"):
        rankeval.sampled(run.assign(rank=1), 100)
    with pytest.raises(InputError, match="no rank column"):
        rankeval.sampled(run, 100, 4)
