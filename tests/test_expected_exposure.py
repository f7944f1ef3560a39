"""Stochastic runs and expected exposure (SPEC section 11, #33).

The oracle ``_expeval`` re-implements diazf/expeval (github.com/diazf/expeval at 69ab070:
``exposure.py`` ``expected`` and ``target``, ``util.py`` ``l2``/``dot``/``distance``, run with
``-u rbp -C -U``: complete judgements, unnormalised) with dicts and loops, from its published
source; it is compared with rankeval on generated stochastic runs with several samples per
query, unjudged items, negative and graded judgements. The target is also derived by brute
force (every ideal ranking that orders the grades, averaged), and every other metric's value
on a stochastic run is checked against scoring each sample alone.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import rankeval
from rankeval.errors import InputError


def _reader(p: float, depth=math.inf, model: str = "rbp"):
    """The exposure w(i) of 0-based rank i: p^i (RBP) or 1/log2(i+2) (DCG), 0 past K."""
    def w(i: int) -> float:
        if i >= depth:
            return 0.0
        return p ** i if model == "rbp" else 1.0 / math.log2(i + 2)
    return w


def _targets(qrels: dict[str, float], w) -> dict[str, float]:
    """expeval's target() (exposure.py): the levels of the distinct grades, descending, each
    sharing the mean exposure of the ranks b..b+m-1 it holds in the ideal ranking."""
    t_level, b = {}, 0
    for g in sorted(set(qrels.values()), reverse=True):
        m = sum(1 for v in qrels.values() if v == g)
        t_level[g] = sum(w(i) for i in range(b, b + m)) / m
        b += m
    return {d: t_level[g] for d, g in qrels.items()}


def _expeval(samples: dict[str, list[str]], qrels: dict[str, float], p: float, depth=math.inf,
             model: str = "rbp") -> tuple[float, float, float]:
    """(EE-D, EE-R, EE-L) of one query as expeval -u rbp -C -U computes them (exposure.py
    expected(): e(d) = sum over samples of p^i / S, i 0-based; target(): the levels of the
    distinct grades, descending, t = (p^b - p^(b+m)) / (m (1 - p)); metrics.py: disparity
    = l2(e)^2, relevance = dot(e, t) over shared keys, difference = distance(e, t)^2 over
    the union). ``depth`` and ``model='dcg'`` are rankeval's generalisations (exposure 0 past
    K on both sides; 1/log2(i+2)), computed the same way rank by rank."""
    w = _reader(p, depth, model)
    e: dict[str, float] = {}
    for ranking in samples.values():
        for i, d in enumerate(ranking):
            e[d] = e.get(d, 0.0) + w(i) / len(samples)
    t = _targets(qrels, w)
    disparity = sum(v * v for v in e.values())
    relevance = sum(e[d] * t[d] for d in set(e) & set(t))
    difference = sum((e.get(d, 0.0) - t.get(d, 0.0)) ** 2 for d in set(e) | set(t))
    return disparity, relevance, difference


def _brute_target(qrels: dict[str, float], p: float) -> dict[str, float]:
    """e* by definition: the mean exposure over every ranking of the judged items that puts
    higher grades first (equally graded items in every order)."""
    items = sorted(qrels)
    rankings = [r for r in itertools.permutations(items)
                if all(qrels[a] >= qrels[b] for a, b in itertools.pairwise(r))]
    out = dict.fromkeys(items, 0.0)
    for r in rankings:
        for i, d in enumerate(r):
            out[d] += p ** i / len(rankings)
    return out


def _generated(seed: int):
    """A stochastic run and graded truth: 12 queries, 1-6 samples each of 1-9 items from a
    pool of 14 (some unjudged), grades -1..3 (some queries with nothing relevant)."""
    rng = np.random.default_rng(seed)
    run, truth, oracle_runs, oracle_qrels = [], [], {}, {}
    for q in range(12):
        user = f"q{q}"
        pool = [f"d{j}" for j in range(14)]
        judged = rng.choice(pool, size=int(rng.integers(1, 10)), replace=False)
        grades = rng.integers(-1, 4, size=len(judged)).astype(float)
        if q % 5 == 0:
            grades = np.minimum(grades, 0)  # nothing relevant: not evaluated (SPEC 2)
        oracle_qrels[user] = dict(zip(judged.tolist(), grades.tolist(), strict=True))
        truth += [(user, d, g) for d, g in oracle_qrels[user].items()]
        samples = {}
        for s in range(int(rng.integers(1, 7))):
            ranking = rng.choice(pool, size=int(rng.integers(1, 10)), replace=False).tolist()
            samples[f"Q{s}"] = ranking
            run += [(user, f"Q{s}", d, i + 1) for i, d in enumerate(ranking)]
        oracle_runs[user] = samples
    run_df = pd.DataFrame(run, columns=["user_id", "sample", "item_id", "rank"])
    truth_df = pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"])
    return run_df.sample(frac=1, random_state=seed), truth_df, oracle_runs, oracle_qrels


def test_spec_worked_example_11():
    truth = pd.DataFrame({"user_id": ["q"] * 3, "item_id": ["A", "B", "C"],
                          "relevance": [1, 1, 0]})
    two = pd.DataFrame({"user_id": ["q"] * 6, "sample": [1, 1, 1, 2, 2, 2],
                        "item_id": ["A", "B", "C", "B", "A", "C"], "rank": [1, 2, 3] * 2})
    ev = rankeval.evaluate(two, truth, metrics="ee_l@all,ee_d@all,ee_r@all")
    assert ev.metrics["ee_l@all"] == pytest.approx(0.0, abs=1e-15)
    assert ev.metrics["ee_d@all"] == pytest.approx(1.1875, abs=1e-15)
    one = pd.DataFrame({"user_id": ["q"] * 3, "item_id": ["A", "C", "B"], "rank": [1, 2, 3]})
    ev = rankeval.evaluate(one, truth, metrics="ee_l@all,ee_d@all")
    assert ev.metrics["ee_l@all"] == pytest.approx(0.375, abs=1e-15)
    assert ev.samples is None  # one ranking per user: deterministic, no samples section


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("p, depth, model", [(0.5, None, "rbp"), (0.8, None, "rbp"),
                                             (0.3, 4, "rbp"), (0.5, 5, "dcg")])
def test_expected_exposure_equals_expeval(seed, p, depth, model):
    run, truth, runs, qrels = _generated(seed)
    at = "all" if depth is None else str(depth)
    names = [f"{m}(p={p}, model='{model}')@{at}" for m in ("ee_d", "ee_r", "ee_l")]
    ev = rankeval.evaluate(run, truth, metrics=",".join(names))
    per_user = ev.per_user.set_index("user_id")
    evaluated = [u for u in qrels if any(g > 0 for g in qrels[u].values())]
    assert sorted(per_user.index) == sorted(evaluated)
    for user in evaluated:
        expected = _expeval(runs[user], qrels[user], p, depth or math.inf, model)
        got = per_user.loc[user, [str(n) for n in ev.specs]].to_numpy(dtype=float)
        assert got == pytest.approx(expected, abs=1e-12), user
    assert ev.metrics[str(ev.specs[2])] == pytest.approx(
        np.mean([_expeval(runs[u], qrels[u], p, depth or math.inf, model)[2]
                 for u in evaluated]), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_target_is_the_mean_over_ideal_rankings(seed):
    """A ranking that samples every ideal ranking uniformly has EE-L 0: the target is the
    exposure each item gets on average over the rankings that order the grades."""
    rng = np.random.default_rng(seed)
    items = [f"d{j}" for j in range(int(rng.integers(2, 6)))]
    grades = dict(zip(items, rng.integers(0, 3, len(items)).astype(float).tolist(),
                      strict=True))
    grades[items[0]] = 2.0  # someone is relevant
    rankings = [r for r in itertools.permutations(items)
                if all(grades[a] >= grades[b] for a, b in itertools.pairwise(r))]
    run = pd.DataFrame([("q", s, d, i + 1) for s, r in enumerate(rankings)
                        for i, d in enumerate(r)], columns=["user_id", "sample", "item_id",
                                                            "rank"])
    truth = pd.DataFrame([("q", d, g) for d, g in grades.items()],
                         columns=["user_id", "item_id", "relevance"])
    ev = rankeval.evaluate(run, truth, metrics="ee_l@all,ee_r@all,ee_d@all")
    target = _brute_target(grades, 0.5)
    norm = sum(v * v for v in target.values())
    assert ev.metrics["ee_l@all"] == pytest.approx(0.0, abs=1e-12)
    assert ev.metrics["ee_r@all"] == pytest.approx(norm, abs=1e-12)
    assert ev.metrics["ee_d@all"] == pytest.approx(norm, abs=1e-12)


@pytest.mark.parametrize("seed", [4, 5])
def test_every_metric_is_its_mean_over_samples(seed):
    """On a stochastic run each user's value is the mean of the values its samples get
    scored alone, the sd their population standard deviation; users count once."""
    run, truth, runs, qrels = _generated(seed)
    metrics = "ndcg@3,map@5,recall@4,precision@2,mrr@all,rbp,ee_l@3"
    ev = rankeval.evaluate(run, truth, metrics=metrics)
    per_user = ev.per_user.set_index("user_id")
    evaluated = [u for u in qrels if any(g > 0 for g in qrels[u].values())]
    assert ev.users.evaluated == len(evaluated) == len(per_user)
    assert ev.users.in_truth == ev.users.in_predictions == 12
    assert ev.samples is not None
    assert ev.samples.rankings == sum(len(runs[u]) for u in evaluated)
    for spec in ev.specs[:-1]:
        name = str(spec)
        for user in evaluated:
            alone = [rankeval.evaluate(
                run[(run.user_id == user) & (run["sample"] == s)].drop(columns="sample"),
                truth[truth.user_id == user], metrics=name).metrics[name]
                for s in runs[user]]
            assert per_user.loc[user, name] == pytest.approx(np.mean(alone), abs=1e-12)
            assert per_user.loc[user, f"{name} sd"] == pytest.approx(np.std(alone), abs=1e-12)
            assert per_user.loc[user, "samples"] == len(runs[user])
    assert ev.metrics["ndcg@3"] == pytest.approx(per_user["ndcg@3"].mean(), abs=1e-12)
    assert ev.samples.spread["ee_l@3"] == 0.0  # one value per user, whatever the sample


def test_users_without_predictions_and_corpus_metrics():
    truth = pd.DataFrame({"user_id": ["a", "a", "b"], "item_id": ["x", "y", "x"],
                          "relevance": [1, 0, 2]})
    run = pd.DataFrame({"user_id": ["a"] * 4, "sample": ["s", "s", "t", "t"],
                        "item_id": ["x", "y", "y", "x"], "rank": [1, 2, 1, 2]})
    ev = rankeval.evaluate(run, truth, metrics="ndcg@2,ee_l@all,ee_d@all")
    assert ev.users.evaluated == 2 and ev.users.without_predictions == 1
    b = ev.per_user.set_index("user_id").loc["b"]
    # no ranking: no exposure; EE-L is then the target's own size, ||e*||^2 = 1
    assert (b["ndcg@2"], b["ee_d@all"], b["ee_l@all"], b["samples"]) == (0, 0, 1.0, 0)
    skipped = rankeval.evaluate(run, truth, metrics="ndcg@2", skip_missing_users=True)
    assert skipped.users.evaluated == 1
    with pytest.raises(InputError, match="item_coverage@2 describe"):
        rankeval.evaluate(run, truth, metrics="ndcg@2,item_coverage@2")


def test_a_sample_column_of_one_value_is_a_deterministic_run():
    truth = pd.DataFrame({"user_id": ["a"], "item_id": ["x"], "relevance": [1]})
    run = pd.DataFrame({"user_id": ["a", "a"], "sample": ["Q0", "Q0"], "item_id": ["y", "x"],
                        "rank": [1, 2]})
    ev = rankeval.evaluate(run, truth, metrics="ndcg@2")
    assert ev.samples is None and "samples" not in ev.per_user.columns


def test_repeated_item_within_a_sample_is_refused_across_samples_is_not():
    truth = pd.DataFrame({"user_id": ["a"], "item_id": ["x"], "relevance": [1]})
    run = pd.DataFrame({"user_id": ["a"] * 3, "sample": ["s", "s", "t"],
                        "item_id": ["x", "x", "x"], "rank": [1, 2, 1]})
    with pytest.raises(InputError, match="listed more than once"):
        rankeval.evaluate(run, truth, metrics="ndcg@2")
    ev = rankeval.evaluate(run, truth, metrics="ndcg@2", dedupe=True)
    assert ev.metrics["ndcg@2"] == 1.0


@pytest.mark.parametrize("fmt", ["csv", "trec", "parquet", "jsonl"])
def test_every_command_reads_a_stochastic_run_per_sample(tmp_path, run_cli, fmt):
    """validate, score and convert read a stochastic run alike in every format: the same
    item or rank in two samples is no repeat, validate counts the users score counts, and a
    repeat within one sample is one line naming (user, sample, item) and its row."""
    run, truth, _, _ = _generated(7)
    run = run.sort_values(["user_id", "sample", "rank"]).reset_index(drop=True)
    run["score"] = 1.0 / run["rank"]
    truth_path = tmp_path / "truth.csv"
    truth.to_csv(truth_path, index=False)
    good, bad = tmp_path / f"good.{fmt}", tmp_path / f"bad.{fmt}"
    repeated = pd.concat([run, run.iloc[[3]].assign(rank=99, score=0.001)], ignore_index=True)
    for frame, path in ((run, good), (repeated, bad)):
        if fmt == "trec":  # the sample in the Q0 field, as expeval reads it
            path.write_text("".join(f"{u} {q} {d} {r} {x!r} tag\n" for u, q, d, r, x in
                                    frame[["user_id", "sample", "item_id", "rank", "score"]]
                                    .itertuples(index=False)))
        elif fmt == "parquet":
            frame.to_parquet(path)
        else:
            getattr(frame, f"to_{fmt.replace('jsonl', 'json')}")(
                path, index=False, **({"orient": "records", "lines": True}
                                      if fmt == "jsonl" else {}))
    score = run_cli("score", good, truth_path, "-m", "ndcg@5", "-f", "json", "-q")
    assert score.exit_code == 0, score.stderr
    check = run_cli("validate", good, truth_path, "-f", "json")
    assert check.exit_code == 0, check.stdout + check.stderr
    assert check.json()["users"] == score.json()["users"]
    user, sample, item = run.iloc[3][["user_id", "sample", "item_id"]]
    for command in (("score", bad, truth_path), ("validate", bad, truth_path),
                    ("convert", bad, tmp_path / "out.csv")):
        r = run_cli(*command)
        assert r.exit_code == 2, r.stderr
        line = next(x for x in (r.stdout + r.stderr).splitlines() if "more than once" in x)
        assert "1 (user, sample, item) triple listed more than once" in line, line
        assert f"'{user} / {sample} / {item}'" in line, line
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("n", [2, 5])
def test_partitions_of_a_stochastic_run_merge_into_the_whole(n):
    """The engines' contract holds on stochastic runs: users split over partitions (each
    with all of its samples), merged, give the whole run's values, spreads and counts."""
    from rankeval.engines.finish import finish
    from rankeval.engines.partial import merge
    from rankeval.engines.partition import evaluate_partition
    from rankeval.io.frames import MemoryTable
    from rankeval.io.load import load_predictions, load_truth
    from rankeval.settings import make_settings

    run, truth, _, _ = _generated(n)
    run = run.assign(score=-(run["rank"] // 2)).drop(columns="rank")  # tied scores
    metrics = ["ndcg", "ee_l", "ee_r", "recall", "mrr"]
    whole = rankeval.evaluate(run, truth, metrics, [3, 10])
    assert whole.tied_users and whole.tie_range
    settings = make_settings(metrics, [3, 10])
    part = {u: i % n for i, u in enumerate(sorted(set(truth.user_id)))}
    partials = [evaluate_partition(
        load_predictions(MemoryTable(run[run.user_id.map(part) == i], "predictions")),
        load_truth(MemoryTable(truth[truth.user_id.map(part) == i], "truth")), settings)
        for i in range(n)]
    merged = finish(merge(partials), settings,
                    load_predictions(MemoryTable(run, "predictions")),
                    load_truth(MemoryTable(truth, "truth")))
    pd.testing.assert_frame_equal(merged.per_user, whole.per_user)
    assert merged.metrics == whole.metrics and merged.users == whole.users
    assert merged.samples == whole.samples
    assert (merged.tied_users, merged.tie_range) == (whole.tied_users, whole.tie_range)


def test_lower_is_better_gates_and_comparisons(tmp_path, run_cli):
    """ee_l and ee_d are losses: --max-drop allows a rise, compare's --fail-if-worse fails on
    a significant rise, non-inferiority bounds the rise; a fall passes them all."""
    import json

    from rankeval.analysis.gates import lower_better
    assert lower_better("ee_l@10") and lower_better("ee_d") and not lower_better("ee_r@5")
    rng = np.random.default_rng(7)
    users = [f"u{i}" for i in range(60)]
    truth = pd.DataFrame([(u, f"d{j}", int(j < 3)) for u in users for j in range(6)],
                         columns=["user_id", "item_id", "relevance"])
    good = pd.DataFrame([(u, f"d{j}", j + 1) for u in users for j in range(6)],
                        columns=["user_id", "item_id", "rank"])  # the ideal order
    bad = good.copy()
    flip = rng.random(len(users)) < 0.8  # most users: relevant items last
    bad["rank"] = np.where(np.repeat(flip, 6), 7 - good["rank"], good["rank"])
    paths = {}
    for name, frame in (("good", good), ("bad", bad), ("truth", truth)):
        paths[name] = str(tmp_path / f"{name}.csv")
        frame.to_csv(paths[name], index=False)
    base = str(tmp_path / "base.json")
    assert run_cli("score", paths["good"], paths["truth"], "-m", "ee_l@all", "-f", "json",
                   "-o", base, "-q").exit_code == 0
    worse = run_cli("score", paths["bad"], paths["truth"], "-m", "ee_l@all", "--baseline",
                    base, "--max-drop", "ee_l@all=0.05", "-q")
    assert worse.exit_code == 1 and "<=" in worse.stdout + worse.stderr
    better = run_cli("score", paths["good"], paths["truth"], "-m", "ee_l@all", "--baseline",
                     base, "--max-drop", "ee_l@all=0.05", "-q")
    assert better.exit_code == 0
    r = run_cli("compare", paths["good"], paths["bad"], paths["truth"], "-m", "ee_l@all",
                "--fail-if-worse", "-f", "json", "-q")
    assert r.exit_code == 1 and json.loads(r.stdout)["passed"] is False
    r = run_cli("compare", paths["bad"], paths["good"], paths["truth"], "-m", "ee_l@all",
                "--fail-if-worse", "--non-inferior", "ee_l@all=0.01", "-q")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "upper bound" in r.stdout + r.stderr


def _expeval_bounds(qrels: dict[str, float], p: float, depth=math.inf, model: str = "rbp"):
    """expeval's -C bounds (metrics.py: Disparity, Relevance, Difference with n = the judged
    documents; pp = p for rbp): {name: (lower, upper)}, in rankeval's reader (w_i)."""
    w = _reader(p, depth, model)
    n = len(qrels)
    ascending = sorted(_targets(qrels, w).values())
    ideal = sum(t * t for t in ascending)
    worst = sum(w(i) * t for i, t in enumerate(ascending))
    return {"ee_d": (sum(w(i) for i in range(n)) ** 2 / n, sum(w(i) ** 2 for i in range(n))),
            "ee_r": (worst, ideal),
            "ee_l": (0.0, sum((w(i) - t) ** 2 for i, t in enumerate(ascending)))}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("p, depth, model", [(0.5, None, "rbp"), (0.8, 4, "rbp"),
                                             (0.5, None, "dcg")])
def test_normalized_expected_exposure_uses_expevals_bounds(seed, p, depth, model):
    """ee_*_norm = (value - lower) / (upper - lower) with expeval's -C bounds; undefined
    where the bounds coincide (expeval prints a default there)."""
    run, truth, runs, qrels = _generated(seed)
    at = "all" if depth is None else str(depth)
    names = [f"{m}_norm(p={p}, model='{model}')@{at}" for m in ("ee_d", "ee_r", "ee_l")]
    ev = rankeval.evaluate(run, truth, metrics=",".join(names))
    per_user = ev.per_user.set_index("user_id")
    for user in per_user.index:
        raw = dict(zip(("ee_d", "ee_r", "ee_l"),
                       _expeval(runs[user], qrels[user], p, depth or math.inf, model),
                       strict=True))
        bounds = _expeval_bounds(qrels[user], p, depth or math.inf, model)
        for spec in ev.specs:
            name = spec.name.removesuffix("_norm")
            low, high = bounds[name]
            got = per_user.loc[user, str(spec)]
            if abs(high - low) <= 1e-12 * max(1.0, abs(high)):
                assert math.isnan(got), (user, spec)
            else:
                assert got == pytest.approx((raw[name] - low) / (high - low), abs=1e-9), (
                    user, spec)
    assert ev.metrics  # the means over the users with a value


def test_normalized_spec_example_is_expevals_printed_values():
    """SPEC worked example 11 under expeval -u rbp -p 0.5 -C (normalised): the two-sample
    run prints 0.571429, 1.000000, 0.000000 and the one ranking 1.000000, 0.666667,
    0.428571 (disparity, relevance, difference)."""
    truth = pd.DataFrame({"user_id": ["q"] * 3, "item_id": ["A", "B", "C"],
                          "relevance": [1, 1, 0]})
    two = pd.DataFrame({"user_id": ["q"] * 6, "sample": [1, 1, 1, 2, 2, 2],
                        "item_id": ["A", "B", "C", "B", "A", "C"], "rank": [1, 2, 3] * 2})
    one = pd.DataFrame({"user_id": ["q"] * 3, "item_id": ["A", "C", "B"], "rank": [1, 2, 3]})
    names = "ee_d_norm@all,ee_r_norm@all,ee_l_norm@all"
    for run, printed in ((two, (0.571429, 1.0, 0.0)), (one, (1.0, 0.666667, 0.428571))):
        got = list(rankeval.evaluate(run, truth, metrics=names).metrics.values())
        assert got == pytest.approx(printed, abs=5e-7)


@pytest.mark.parametrize("seed", [3, 4])
def test_tied_scores_order_as_the_tie_rule_says(seed):
    """A stochastic run given by scores with ties: each sample ordered by score, ties broken
    by item id (``ties='item-asc'``), then expeval's computation on those orders."""
    run, truth, runs, qrels = _generated(seed)
    run = run.assign(score=-(run["rank"] // 3)).drop(columns="rank")  # ties in threes
    # score -(rank // 3): higher scores first are the lower rank // 3; ties by item id
    ordered = {u: {s: [d for _, d in sorted(((i + 1) // 3, d) for i, d in enumerate(items))]
                   for s, items in samples.items()} for u, samples in runs.items()}
    ev = rankeval.evaluate(run, truth, metrics="ee_d@all,ee_r@all,ee_l@all", ties="item-asc")
    assert ev.tied_users > 0
    per_user = ev.per_user.set_index("user_id")
    for user in per_user.index:
        got = per_user.loc[user, ["ee_d@all", "ee_r@all", "ee_l@all"]].to_numpy(dtype=float)
        assert got == pytest.approx(_expeval(ordered[user], qrels[user], 0.5), abs=1e-12), user


def test_a_partition_without_truth_rows():
    """A partition whose users are only in the predictions (a Spark or Ray task can get one)
    has an empty truth: its users count as users without relevant items, as in the whole."""
    import pyarrow as pa

    from rankeval.engines.finish import finish
    from rankeval.engines.partial import merge
    from rankeval.engines.partition import evaluate_partition
    from rankeval.io.frames import MemoryTable
    from rankeval.io.load import Truth, load_predictions, load_truth
    from rankeval.io.readers import Source

    run, truth, _, _ = _generated(4)
    extra = run[run.user_id == run.user_id.iloc[0]].assign(user_id="stranger")
    run = pd.concat([run, extra], ignore_index=True)
    whole = rankeval.evaluate(run, truth, ["ndcg", "ee_l"], [5])
    settings = rankeval.make_settings(["ndcg", "ee_l"], [5])
    ids = pa.chunked_array([], pa.string())
    empty = Truth(ids, ids, np.zeros(0), Source("truth", "dataframe", 0), {})
    partials = [
        evaluate_partition(load_predictions(MemoryTable(run[run.user_id != "stranger"], "p")),
                           load_truth(MemoryTable(truth, "t")), settings),
        evaluate_partition(load_predictions(MemoryTable(extra, "p")), empty, settings)]
    merged = finish(merge(partials), settings, load_predictions(MemoryTable(run, "p")),
                    load_truth(MemoryTable(truth, "t")))
    assert merged.metrics == whole.metrics and merged.users == whole.users
