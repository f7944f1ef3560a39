"""Invariants that must hold for any input (hypothesis)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.registry import REGISTRY

BOUNDED = [name for name, m in REGISTRY.items() if m.bounded]
KS = [1, 3, 5, 10]


@st.composite
def datasets(draw):
    """A random run (ranks, possibly short lists) and graded truth over a small item pool."""
    n_users = draw(st.integers(1, 6))
    pool = [f"i{j}" for j in range(draw(st.integers(1, 12)))]
    preds, truth = [], []
    for u in range(n_users):
        user = f"u{u}"
        listed = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
        preds += [(user, item, r) for r, item in enumerate(listed, 1)]
        judged = draw(st.lists(st.sampled_from(pool), unique=True, min_size=1))
        grades = draw(st.lists(st.integers(-1, 4), min_size=len(judged), max_size=len(judged)))
        truth += list(zip([user] * len(judged), judged, grades, strict=True))
    return (
        pd.DataFrame(preds, columns=["user_id", "item_id", "rank"]),
        pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]),
    )


def _has_evaluated_users(truth: pd.DataFrame) -> bool:
    return bool((truth.relevance > 0).any())


def _usable(preds: pd.DataFrame, truth: pd.DataFrame) -> bool:
    """An empty run is an input error, and so is a truth without a relevant item."""
    return len(preds) > 0 and _has_evaluated_users(truth)


OPTIONS = st.fixed_dictionaries(
    {
        "gain": st.sampled_from(["linear", "exponential"]),
        "ap_denominator": st.sampled_from(["min", "relevant"]),
        "rr_target": st.sampled_from(["first-relevant", "most-relevant"]),
    }
)


@given(datasets(), OPTIONS)
def test_bounded_metrics_lie_in_unit_interval(data, options):
    preds, truth = data
    assume(_usable(preds, truth))
    whole = [f"{name}@all" for name, m in REGISTRY.items()
             if m.cutoff and not m.needs and m.scope == "per_user"]
    plain = [n for n, m in REGISTRY.items() if not m.needs and m.scope == "per_user"]
    r = evaluate(preds, truth, [*plain, *whole], KS, **options)
    frame = r.per_user
    for spec in r.settings.specs:
        values = frame[str(spec)].to_numpy()
        if REGISTRY[spec.name].undefined_when:  # a value may be undefined: never a number
            values = values[~np.isnan(values)]
        assert np.isfinite(values).all()
        if REGISTRY[spec.name].overall == "geometric":  # per user: log max(AP, 1e-5)
            assert (values >= np.log(1e-5)).all() and (values <= 0).all()
            continue
        assert (values >= 0).all() or REGISTRY[spec.name].signed
        if spec.name in BOUNDED:
            assert (values <= 1 + 1e-12).all(), spec


@given(datasets(), st.sampled_from(["linear", "exponential"]))
def test_a_perfect_ranking_scores_one(data, gain):
    _, truth = data
    relevant = truth[truth.relevance > 0]
    assume(not relevant.empty)
    ideal = relevant.sort_values(["user_id", "relevance", "item_id"], ascending=[True, False, True])
    ideal = ideal.assign(rank=ideal.groupby("user_id").cumcount() + 1)
    ideal = ideal[["user_id", "item_id", "rank"]]
    names = ["ndcg", "map", "mrr", "hit_rate", "recall"]
    r = evaluate(ideal, truth, [*names, "ndcg@all", "map@all", "recall@all", "r_precision"], KS,
                 gain=gain)
    for name in ("ndcg", "map", "mrr", "hit_rate"):
        for k in KS:
            assert r.metrics[f"{name}@{k}"] == pytest.approx(1.0), (name, k)
    for name in ("ndcg@all", "map@all", "recall@all", "r_precision"):
        assert r.metrics[name] == pytest.approx(1.0), name
    n_rel = relevant.groupby("user_id").size()
    if (n_rel <= 1).all():
        assert r.metrics["recall@1"] == pytest.approx(1.0)


@given(datasets(), st.randoms(use_true_random=False))
@pytest.mark.slow
def test_row_order_and_id_names_do_not_matter(data, rnd):
    preds, truth = data
    assume(_usable(preds, truth))
    metrics = [n for n, m in REGISTRY.items() if not m.needs and m.scope == "per_user"]
    base = evaluate(preds, truth, metrics, KS).per_user.set_index("user_id").sort_index()

    seed = rnd.randint(0, 2**31)
    shuffled = evaluate(
        preds.sample(frac=1, random_state=seed), truth.sample(frac=1, random_state=seed + 1),
        metrics, KS,
    ).per_user.set_index("user_id").sort_index()
    pd.testing.assert_frame_equal(base, shuffled, check_exact=False, rtol=1e-12)

    # Renaming ids (a bijection) changes no value; the rank column keeps the order fixed.
    def rename(frame):
        return frame.assign(user_id="user-" + frame.user_id, item_id=frame.item_id.str.upper())

    renamed = evaluate(rename(preds), rename(truth), metrics, KS).per_user
    renamed = renamed.assign(user_id=renamed.user_id.str.removeprefix("user-"))
    pd.testing.assert_frame_equal(
        base, renamed.set_index("user_id").sort_index(), check_exact=False, rtol=1e-12
    )


@given(datasets())
def test_recall_hit_rate_and_cg_never_decrease_with_k(data):
    preds, truth = data
    assume(_usable(preds, truth))
    frame = evaluate(preds, truth, ["recall", "hit_rate", "cg", "idcg"], KS).per_user
    for name in ("recall", "hit_rate", "cg", "idcg"):
        for lo, hi in itertools.pairwise(KS):
            assert (frame[f"{name}@{hi}"] >= frame[f"{name}@{lo}"] - 1e-12).all(), name


@given(data=datasets())
def test_csv_round_trip_gives_the_same_numbers(data, tmp_path_factory):
    preds, truth = data
    assume(_usable(preds, truth))
    folder = tmp_path_factory.mktemp("rt")
    preds.to_csv(folder / "p.csv", index=False)
    truth.to_csv(folder / "t.csv", index=False)
    from_files = evaluate(str(folder / "p.csv"), str(folder / "t.csv"), None, KS)
    in_memory = evaluate(preds, truth, None, KS)
    assert from_files.metrics == pytest.approx(in_memory.metrics)
