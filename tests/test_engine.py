"""Partial results of disjoint partitions of users merge into exactly the whole evaluation.

This is what a distributed engine stands on: any split of the users, each partition built and
scored on its own (its own id dictionaries, its own sorting), must give the same per-user table,
the same means (to the last bit: sums are kept exact until one final rounding), the same counts
and the same notices as evaluating everything at once.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.build.items import item_stats
from rankeval.engines.finish import finish
from rankeval.engines.partial import merge
from rankeval.engines.partition import evaluate_partition
from rankeval.errors import InputError
from rankeval.io.extras import load_extras
from rankeval.io.frames import MemoryTable
from rankeval.io.load import load_predictions, load_truth
from rankeval.kernels.aggregate import exact_parts, mean
from rankeval.registry import REGISTRY
from rankeval.settings import TABLE, make_settings

from .datagen import generate

# (the intent-aware metrics read subtopics, which these inputs lack: test_diversity.py). The
# ips_ metrics read --propensity, one of them the popularity model (gamma=) too.
METRICS = [*(n for n, m in REGISTRY.items() if "subtopics" not in m.needs), "ndcg@all",
           "map@all", "precision@all", "ips_ndcg(gamma=2)", "ips_dcg(gamma=1, sn=False)"]
KS = [1, 3, 10]


# A value off the default for each setting that takes a number (a new one must be added here).
NUMBERS = {"relevance_threshold": 2.0, "max_depth": 5, "rbp_p": 0.5, "err_max_grade": 6.0,
           "patience": 0.7,
           "tail_share": 0.5, "gains": "1=0.5,2=2", "collection_size": 1000,
           "catalog_padding": 1}


# Settings the partitioned engines refuse (no partials merge under them): judgment groups
# score (user, group) pairs and average them before the partial is finished; z-scores read a
# file of the users' means (test_trec_eval_zscores); preferences are scored apart from the
# metrics (their own measures, no partial)
LOCAL_ONLY = ("judgment_groups", "zscores", "preferences")


def _conventions() -> list[dict]:
    """Every value of every setting, one at a time, and all of them off their defaults."""
    cases = [{}]
    for s in TABLE:
        if s.name in LOCAL_ONLY:
            continue
        values = (s.choices if s.choices is not None else [True] if s.is_flag
                  else [NUMBERS[s.name]])
        cases += [{s.name: v} for v in values if v != s.default]
    cases.append({"gain": "exponential", "ap_denominator": "relevant",
                  "rr_target": "most-relevant", "relevance_threshold": 2.0, "ties": "input",
                  "zero_relevant_users": "zero", "skip_missing_users": True, "dedupe": True,
                  "max_depth": 8, "judged_only": True, "rbp_p": 0.9, "exclude_seen": True,
                  "exclude_seen_truth": True, "popularity": "interactions"})
    return cases


def _extras(preds: pd.DataFrame, seed: int, truth: pd.DataFrame):
    """Training interactions (some of them predicted again, some repeated), a catalog with
    items nobody predicted, feature vectors for most items, item groups (some items in
    two groups, some in none), and a propensity for every judged (user, item) pair."""
    rng = np.random.default_rng(seed)
    seen = preds.sample(frac=0.2, random_state=seed)[["user_id", "item_id"]]
    other = pd.DataFrame({"user_id": rng.choice(preds.user_id.unique(), 300),
                          "item_id": rng.choice(preds.item_id.unique(), 300)})
    # the most popular item in training is one few users were shown: partitions without it
    # must still weigh items against it (the IPS forms of the propensity metrics)
    rare = preds.item_id.value_counts().index[-1]
    hot = pd.DataFrame({"user_id": [f"fan{j}" for j in range(120)], "item_id": rare})
    train = pd.concat([seen, other, other.head(20), hot], ignore_index=True)
    train["count"] = rng.integers(1, 4, len(train))
    catalog = pd.DataFrame({"item_id": [*preds.item_id.unique(), "never-1", "never-2"]})
    featured = catalog.item_id[rng.random(len(catalog)) < 0.8]
    features = pd.DataFrame({"item_id": featured,
                             **{f"f{d}": rng.normal(size=len(featured)) for d in range(3)}})
    grouped = catalog.item_id[rng.random(len(catalog)) < 0.9]
    groups = pd.DataFrame({"item_id": grouped, "provider": rng.choice(list("abcd"),
                                                                      len(grouped))})
    groups = pd.concat([groups, groups.head(9).assign(provider="e")], ignore_index=True)
    pairs = truth[["user_id", "item_id"]].drop_duplicates()
    propensity = pairs.assign(propensity=rng.uniform(0.05, 1.0, len(pairs)))
    return train, catalog, features, groups, propensity


def _data(seed: int, dedupe: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Graded truth, tied scores, users in one file only, padded ids, repeated pairs (when
    ``dedupe`` may drop them)."""
    preds, truth = generate(seed, 90, 40, 14, 9)
    rng = np.random.default_rng(seed)
    preds["score"] = np.round(preds["score"], 0)  # ties, some across K
    preds.loc[preds.sample(5, random_state=seed).index, "item_id"] += " "  # padded ids
    if dedupe:  # worse-scored repeats
        repeats = preds.sample(6, random_state=seed + 1).assign(score=lambda d: d["score"] - 20)
        preds = pd.concat([preds, repeats], ignore_index=True)
    truth["relevance"] = truth["relevance"] + rng.choice([0.0, 0.5], len(truth))
    return preds, truth


def _split(preds, truth, n: int, seed: int):
    """Users assigned at random to n partitions, each with rows in both files."""
    users = np.union1d(preds["user_id"].unique(), truth["user_id"].unique())
    rng = np.random.default_rng(seed)
    while True:
        part = dict(zip(users, rng.integers(0, n, len(users)), strict=True))
        p, t = preds["user_id"].map(part), truth["user_id"].map(part)
        pieces = [(preds[p == i], truth[t == i]) for i in range(n)]
        if all(len(a) and len(b) for a, b in pieces):
            return pieces


def _merged(pieces, settings, train=None, catalog=None, features=None, groups=None,
            propensity=None):
    """Each partition built on its own; item statistics (popularity, catalog) computed once
    over the whole inputs, as a distributed engine would broadcast them."""
    whole_p = load_predictions(MemoryTable(pd.concat([p for p, _ in pieces]), "predictions"))
    whole_t = load_truth(MemoryTable(pd.concat([t for _, t in pieces]), "truth"))
    extras = load_extras({"train": train, "catalog": catalog, "item_features": features,
                          "item_groups": groups, "propensity": propensity})
    stats = item_stats(extras, whole_p, settings)
    partials = []
    for p, t in pieces:
        partials.append(evaluate_partition(load_predictions(MemoryTable(p, "predictions")),
                                           load_truth(MemoryTable(t, "truth")), settings,
                                           extras, stats))
    return finish(merge(partials), settings, whole_p, whole_t, extras, stats)


@pytest.mark.parametrize("options", _conventions(), ids=lambda o: ",".join(map(str, o.items())))
@pytest.mark.parametrize("n", [1, 2, 7])
def test_partitions_merge_into_the_whole(options, n):
    preds, truth = _data(seed=n, dedupe=bool(options.get("dedupe")))
    metrics = METRICS
    if options.get("ties") == "expected":  # without the measures that have no closed form
        metrics = [m for m in METRICS if REGISTRY[m.split("@")[0].split("(")[0]].tie_expectation]
    train, catalog, features, groups, propensity = _extras(preds, n, truth)
    whole = evaluate(preds, truth, metrics, KS, train=train, catalog=catalog,
                     item_features=features, item_groups=groups, propensity=propensity,
                     **options)
    settings = make_settings(metrics, KS, **options)
    merged = _merged(_split(preds, truth, n, seed=len(options) + n), settings, train, catalog,
                     features, groups, propensity)
    pd.testing.assert_frame_equal(merged.per_user, whole.per_user)
    assert merged.metrics == whole.metrics  # exact: one rounding, of the same exact sum
    assert merged.users == whole.users
    assert merged.notices == whole.notices
    assert merged.prediction_rows_beyond_k == whole.prediction_rows_beyond_k
    assert len(whole.per_user) > 40 and len(whole.notices) >= 3


def test_a_split_that_breaks_a_user_is_not_what_partitions_are():
    """The contract needs complete users: splitting one user's rows changes the result, so the
    test above would catch an engine that partitions by row."""
    preds, truth = _data(seed=3)
    plain = [m for m in METRICS if not REGISTRY[m.split("@")[0].split("(")[0]].needs]
    settings = make_settings(plain, KS)
    by_row = merge([evaluate_partition(load_predictions(MemoryTable(p, "predictions")),
                                       load_truth(MemoryTable(truth, "truth")), settings)
                    for p in (preds.iloc[: len(preds) // 2], preds.iloc[len(preds) // 2:])])
    whole = evaluate(preds, truth, plain, KS)
    assert by_row.counts != whole.users


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=300),
       st.integers(0, 300))
def test_exact_parts_sum_exactly_and_merge(values, cut):
    x = np.array(values, dtype=np.float64)
    exact = _exact(values)  # rational arithmetic: the oracle
    assert _exact(exact_parts(x)) == exact
    cut = min(cut, len(x))
    assert _exact(exact_parts(x[:cut]) + exact_parts(x[cut:])) == exact
    if len(x) and abs(exact) < 1e300:
        assert mean(exact_parts(x), len(x)) == float(exact) / len(x)


def _exact(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


def test_exact_parts_of_large_and_tiny_values():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(5000) * 10.0 ** rng.integers(-300, 300, 5000)
    assert _exact(exact_parts(x)) == _exact(x.tolist())
    y = np.array([1e308, 1e308, -1e308, 1e-320, 5e-324, -1.5e308])
    assert _exact(exact_parts(y)) == _exact(y.tolist())


@pytest.mark.parametrize("style", ["text", "numbered"])
def test_released_ids_change_nothing(style):
    """Letting go of the id columns once encoded (as the command line and ``evaluate`` do)
    gives the same evaluation, and a repeated pair is still named by its ids as written."""
    preds, truth = generate(11, 60, 40, 12, 6)
    if style == "numbered":
        for frame in (preds, truth):
            frame["user_id"] = frame["user_id"].str[1:].astype(int).map("{:05d}".format)
    settings = make_settings([n for n, m in REGISTRY.items() if not m.needs], KS)
    results = []
    for release in (False, True):
        p = load_predictions(MemoryTable(preds, "run"))
        t = load_truth(MemoryTable(truth, "qrels"))
        stats = item_stats(load_extras({}), p, settings)
        results.append(finish(evaluate_partition(p, t, settings, None, stats, release),
                              settings, p, t, stats=stats))
        assert (p.user is None) is release and (t.item is None) is release
    pd.testing.assert_frame_equal(results[0].per_user, results[1].per_user)
    assert results[0].metrics == results[1].metrics
    assert results[0].warnings == results[1].warnings

    run_twice = pd.concat([preds, preds.iloc[[7]].assign(score=-50.0)], ignore_index=True)
    judged_twice = pd.concat([truth, truth.iloc[[3]]], ignore_index=True)
    for run, judged, row in ((run_twice, truth, preds.iloc[7]),
                             (preds, judged_twice, truth.iloc[3])):
        messages = []
        for release in (False, True):
            p = load_predictions(MemoryTable(run, "run"))
            t = load_truth(MemoryTable(judged, "qrels"))
            with pytest.raises(InputError) as caught:
                evaluate_partition(p, t, make_settings(["ndcg@3"], None), release=release)
            messages.append(str(caught.value))
        assert messages[0] == messages[1]
        assert f"{row.user_id} / {row.item_id}" in messages[1]


@pytest.mark.parametrize("inline", [False, True])
def test_later_returns_raises_and_reports_as_its_caller(inline):
    """``threads.Later``: the value, the exception, and errors reported in the caller's
    collecting context, whether the work ran on a thread or inline."""
    import threading

    from rankeval.errors import collecting, report
    from rankeval.kernels.threads import Later

    ran_on = []
    later = Later(lambda a, b: ran_on.append(threading.get_ident()) or a + b, 2, 3,
                  inline=inline)
    assert later.result() == 5
    assert (ran_on[0] == threading.get_ident()) == inline
    failing = Later(lambda: 1 // 0, inline=inline)
    with pytest.raises(ZeroDivisionError):
        failing.result()
    with collecting() as found:
        Later(report, InputError("truth.csv", "a problem"), inline=inline).result()
    assert [str(e) for e in found] == ["truth.csv: a problem"]


def test_each_runs_every_item_in_order_on_one_pool_and_nests_inline():
    """``threads.each``: results in item order; every item done before the first failure (in
    item order) is raised; a call inside an item runs inline (never waiting for the pool it
    runs on); the pool's threads are started once for the process."""
    import threading
    import time

    from rankeval.kernels.threads import each

    assert each(lambda x: x * x, range(20)) == [x * x for x in range(20)]
    names = set(each(lambda _: threading.current_thread().name, range(8)))
    again = set(each(lambda _: threading.current_thread().name, range(8)))
    assert names | again <= {f"rankeval-each_{k}" for k in range(2)}
    assert each(lambda x: each(lambda y: (x, y), range(3)), range(4)) == [
        [(x, y) for y in range(3)] for x in range(4)]
    done = []

    def work(x):
        if x in (1, 3):
            raise ValueError(x)
        time.sleep(0.05)
        done.append(x)

    with pytest.raises(ValueError, match="1"):
        each(work, range(6))
    assert sorted(done) == [0, 2, 4, 5]


def test_each_in_a_forked_child_starts_a_pool_of_its_own():
    """A process forked after the pool started (a Spark or Ray worker, multiprocessing) has
    none of the parent's threads: ``each`` there starts its own pool, never waits forever."""
    import os
    import time

    from rankeval.kernels.threads import each

    each(lambda x: x, range(4))  # the parent's pool, started
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only with the right answer
        try:
            os._exit(0 if each(lambda x: x + 1, range(6)) == [1, 2, 3, 4, 5, 6] else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("each in a forked child never returned")


def test_truth_side_on_its_own_thread_gives_the_inline_numbers(monkeypatch):
    """Big inputs build the truth's pairs and ideal lists on a thread beside the run's side:
    values, notices and errors are those of the inline build, with seen truth dropped too."""
    from rankeval.build import stages as ranking

    preds, truth = generate(5, n_users=300, n_items=200, list_len=30, judged=20)
    train = truth.sample(frac=0.2, random_state=1)[["user_id", "item_id"]]
    dup = pd.concat([truth, truth.iloc[[3]]])
    names = ["ndcg", "map", "recall", "bpref", "err"]
    runs, errors = [], []
    for threshold in (0, 10**12):
        monkeypatch.setattr(ranking, "_THREADED_ROWS", threshold)
        runs.append([evaluate(preds, truth, metrics=names, k=[3, 10]),
                     evaluate(preds, truth, metrics=names, k=[3, 10], train=train,
                              exclude_seen_truth=True, relevance_threshold=2)])
        with pytest.raises(InputError) as caught:
            evaluate(preds, dup, metrics=names, k=[3])
        errors.append(str(caught.value))
    for threaded, inline in zip(*runs, strict=True):
        assert threaded.metrics == inline.metrics
        assert threaded.notices == inline.notices
        pd.testing.assert_frame_equal(threaded.per_user, inline.per_user)
    assert errors[0] == errors[1] and "more than once" in errors[0]
    assert any(n.code == "seen_truth_dropped" for n in runs[0][1].notices)


def test_kernels_on_two_threads_give_the_serial_numbers(monkeypatch):
    """Big chunks run the metric kernels on two threads, sharing Sums' cached intermediates:
    every per-user value is the serial one, bit for bit, in every tie convention."""
    from rankeval.kernels import metrics as kernels

    preds, truth = generate(3, n_users=400, n_items=300, list_len=40, judged=25)
    preds["score"] = preds["score"].round(1)  # ties
    names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "r_precision", "dcg",
             "ndcg", "bpref", "rbp", "err", "judged", "ndcg_burges", "iprec", "gm_map"]
    for ties in ("trec", "optimistic", "pessimistic"):
        runs = []
        for threshold in (0, 10**12):
            monkeypatch.setattr(kernels, "_THREADED_ROWS", threshold)
            runs.append(evaluate(preds, truth, metrics=names, k=[1, 5, 20], ties=ties))
        threaded, serial = runs
        assert threaded.metrics == serial.metrics
        pd.testing.assert_frame_equal(threaded.per_user, serial.per_user)
