"""Metric conventions of SPEC sections 2 and 3 on hand-built cases small enough to check by eye."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rankeval import evaluate
from rankeval.errors import OptionError
from rankeval.registry import REGISTRY as REGISTRY_NAMES

from .conftest import judged, ranked

# Per-user metrics that need no input beyond predictions and truth.
PLAIN = [n for n, m in REGISTRY_NAMES.items() if not m.needs and m.scope == "per_user"]


def one(preds, truth, metrics, k, **options):
    return evaluate(ranked(preds), judged(truth), metrics, k, **options)


def test_precision_divides_by_k_even_for_a_short_list():
    r = one({"u": ["A"]}, {"u": {"A": 1}}, ["precision", "recall", "f1", "hit_rate"], 5)
    assert r.metrics["precision@5"] == pytest.approx(0.2)
    assert r.metrics["recall@5"] == pytest.approx(1.0)
    assert r.metrics["f1@5"] == pytest.approx(2 * 0.2 * 1.0 / 1.2)
    assert r.metrics["hit_rate@5"] == 1.0


def test_recall_counts_relevant_items_over_the_whole_truth():
    truth = {"u": {"A": 1, "B": 1, "C": 1, "D": 0}}
    r = one({"u": ["A", "D", "X"]}, truth, ["recall", "precision"], 3)
    assert r.metrics["recall@3"] == pytest.approx(1 / 3)
    assert r.metrics["precision@3"] == pytest.approx(1 / 3)


def test_f1_is_zero_when_nothing_is_hit():
    r = one({"u": ["X", "Y"]}, {"u": {"A": 1}}, ["f1", "mrr", "map", "ndcg"], 2)
    assert r.values("f1@2").tolist() == [0.0]
    assert r.metrics["mrr@2"] == 0.0
    assert r.metrics["map@2"] == 0.0
    assert r.metrics["ndcg@2"] == 0.0


def test_mrr_only_looks_inside_the_cut_off():
    r = one({"u": ["X", "Y", "A"]}, {"u": {"A": 1}}, ["mrr"], [2, 3])
    assert r.metrics["mrr@2"] == 0.0
    assert r.metrics["mrr@3"] == pytest.approx(1 / 3)


def test_ap_denominator_min_and_relevant():
    truth = {"u": {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}}
    preds = {"u": ["6", "4", "7", "1", "2"]}
    assert one(preds, truth, ["map"], 2).metrics["map@2"] == pytest.approx(0.25)
    relevant = one(preds, truth, ["map"], 2, ap_denominator="relevant").metrics["map@2"]
    assert relevant == pytest.approx(0.5 / 5)


def test_cg_dcg_with_linear_and_exponential_gain():
    truth = {"u": {"A": 2, "B": 0, "C": 3, "D": 2}}
    preds = {"u": list("ABCD")}
    lin = one(preds, truth, ["cg", "dcg"], 4)
    assert lin.metrics["cg@4"] == pytest.approx(7.0)
    assert lin.metrics["dcg@4"] == pytest.approx(2 + 3 / 2 + 2 / math.log2(5))
    exp = one(preds, truth, ["cg", "dcg"], 4, gain="exponential")
    assert exp.metrics["cg@4"] == pytest.approx(3 + 7 + 3)
    assert exp.metrics["dcg@4"] == pytest.approx(3 + 7 / 2 + 3 / math.log2(5))


def test_idcg_ignores_the_predictions():
    truth = {"u": {"A": 1, "B": 3, "C": 2}}
    a = one({"u": ["A"]}, truth, ["idcg"], 2).metrics["idcg@2"]
    b = one({"u": ["Z", "Y", "C"]}, truth, ["idcg"], 2).metrics["idcg@2"]
    assert a == b == pytest.approx(3 + 2 / math.log2(3))


def test_negative_relevance_has_gain_zero_and_is_never_relevant():
    truth = {"u": {"A": -2, "B": 1}}
    r = one({"u": ["A", "B"]}, truth, ["cg", "dcg", "ndcg", "precision", "mrr"], 2)
    assert r.metrics["cg@2"] == pytest.approx(1.0)
    assert r.metrics["dcg@2"] == pytest.approx(1 / math.log2(3))
    assert r.metrics["ndcg@2"] == pytest.approx(1 / math.log2(3))
    assert r.metrics["precision@2"] == pytest.approx(0.5)
    assert r.metrics["mrr@2"] == pytest.approx(0.5)


def test_relevance_threshold_applies_to_binary_metrics_only():
    truth = {"u": {"A": 1, "B": 3}}
    preds = {"u": ["A", "B"]}
    default = one(preds, truth, ["precision", "recall", "mrr", "ndcg"], 2)
    strict = one(preds, truth, ["precision", "recall", "mrr", "ndcg"], 2, relevance_threshold=2)
    assert default.metrics["precision@2"] == 1.0
    assert strict.metrics["precision@2"] == 0.5
    assert strict.metrics["recall@2"] == 1.0
    assert strict.metrics["mrr@2"] == 0.5
    assert strict.metrics["ndcg@2"] == default.metrics["ndcg@2"]


def test_rr_target_most_relevant_takes_the_best_ranked_of_equal_maxima():
    truth = {"u": {"A": 1, "B": 3, "C": 3}}
    r = one({"u": ["A", "X", "C", "B"]}, truth, ["mrr"], [2, 4], rr_target="most-relevant")
    assert r.metrics["mrr@2"] == 0.0
    assert r.metrics["mrr@4"] == pytest.approx(1 / 3)


def test_users_without_relevant_items_are_skipped_or_scored_zero():
    truth = {"u1": {"A": 1}, "u2": {"B": 0}}
    preds = {"u1": ["A"], "u2": ["B"]}
    skipped = one(preds, truth, ["ndcg"], 1)
    assert skipped.metrics["ndcg@1"] == 1.0
    assert skipped.to_dict()["users"]["evaluated"] == 1
    assert skipped.to_dict()["users"]["without_relevant"] == 1
    zero = one(preds, truth, ["ndcg", "recall"], 1, zero_relevant_users="zero")
    assert zero.metrics["ndcg@1"] == 0.5
    assert zero.metrics["recall@1"] == 0.5
    assert zero.to_dict()["users"]["evaluated"] == 2


def test_users_without_predictions_score_zero_unless_skipped():
    truth = {"u1": {"A": 1}, "u2": {"B": 1}}
    preds = {"u1": ["A"]}
    honest = one(preds, truth, ["hit_rate"], 1)
    assert honest.metrics["hit_rate@1"] == 0.5
    assert honest.per_user.set_index("user_id").loc["u2", "hit_rate@1"] == 0.0
    assert honest.to_dict()["users"]["without_predictions"] == 1
    skipped = one(preds, truth, ["hit_rate"], 1, skip_missing_users=True)
    assert skipped.metrics["hit_rate@1"] == 1.0
    assert skipped.to_dict()["users"]["evaluated"] == 1


def test_prediction_users_absent_from_the_truth_are_counted_not_evaluated():
    r = one({"u1": ["A"], "ghost": ["A"]}, {"u1": {"A": 1}}, ["mrr"], 1)
    users = r.to_dict()["users"]
    assert users["evaluated"] == 1
    assert users["only_in_predictions"] == 1
    assert any("not in" in w for w in r.warnings)


def test_rows_beyond_the_largest_k_are_ignored_and_counted():
    r = one({"u": ["X", "Y", "A"]}, {"u": {"A": 1}}, ["hit_rate"], 2)
    assert r.metrics["hit_rate@2"] == 0.0
    assert r.to_dict()["inputs"]["predictions"]["rows_beyond_k"] == 1


def test_score_ties_use_trec_eval_order_item_id_descending_as_bytes():
    preds = evaluate(
        _scored([("u", "10", 1.0), ("u", "9", 1.0), ("u", "X", 0.5)]),
        judged({"u": {"9": 1}}),
        ["mrr"],
        3,
    )
    # "9" > "10" as byte strings, so 9 is ranked first.
    assert preds.metrics["mrr@3"] == 1.0
    flipped = evaluate(
        _scored([("u", "10", 1.0), ("u", "9", 1.0)]), judged({"u": {"10": 1}}), ["mrr"], 2
    )
    assert flipped.metrics["mrr@2"] == 0.5


def test_ties_across_a_cut_off_are_reported():
    frame = _scored([("u", "A", 1.0), ("u", "B", 1.0), ("v", "A", 2.0), ("v", "B", 1.0)])
    r = evaluate(frame, judged({"u": {"A": 1}, "v": {"A": 1}}), ["precision"], 1)
    notices = {n["code"]: n["count"] for n in r.to_dict()["notices"]}
    assert notices["ties_at_cutoff"] == 1


def test_higher_score_is_better_and_negative_scores_are_fine():
    frame = _scored([("u", "A", -3.0), ("u", "B", -1.0)])
    r = evaluate(frame, judged({"u": {"B": 1}}), ["mrr"], 2)
    assert r.metrics["mrr@2"] == 1.0


def test_without_rank_or_score_the_file_order_is_the_ranking():
    import pandas as pd

    frame = pd.DataFrame({"user_id": ["u", "v", "u"], "item_id": ["X", "A", "A"]})
    r = evaluate(frame, judged({"u": {"A": 1}, "v": {"A": 1}}), ["mrr"], 2)
    assert r.per_user.set_index("user_id")["mrr@2"].to_dict() == {"u": 0.5, "v": 1.0}


def test_rank_gaps_keep_the_order_and_are_reported():
    import pandas as pd

    frame = pd.DataFrame({"user_id": ["u", "u"], "item_id": ["A", "B"], "rank": [7, 3]})
    r = evaluate(frame, judged({"u": {"A": 1}}), ["mrr"], 2)
    assert r.metrics["mrr@2"] == 0.5
    assert any(n["code"] == "rank_gaps" for n in r.to_dict()["notices"])


def test_dedupe_keeps_the_best_ranked_occurrence():
    import pandas as pd

    frame = pd.DataFrame(
        {"user_id": ["u"] * 3, "item_id": ["A", "B", "A"], "rank": [3, 2, 1]}
    )
    r = evaluate(frame, judged({"u": {"A": 1}}), ["mrr"], 2, dedupe=True)
    assert r.metrics["mrr@2"] == 1.0
    assert any("dropped" in w for w in r.warnings)


def test_summary_and_values_agree_with_the_per_user_table():
    truth = {"u1": {"A": 1}, "u2": {"B": 2, "C": 1}}
    r = one({"u1": ["A", "B"], "u2": ["C", "B"]}, truth, ["ndcg", "recall"], [1, 2])
    for name, mean in r.metrics.items():
        assert r.per_user[name].mean() == pytest.approx(mean)
        assert np.mean(r.values(name)) == pytest.approx(mean)
    assert r.summary.loc["ndcg", 2] == pytest.approx(r.metrics["ndcg@2"])


def test_bad_options_raise_option_error():
    with pytest.raises(OptionError, match="gain"):
        one({"u": ["A"]}, {"u": {"A": 1}}, ["ndcg"], 1, gain="cubic")
    with pytest.raises(OptionError, match="positive integer"):
        one({"u": ["A"]}, {"u": {"A": 1}}, ["ndcg"], 0)


def _scored(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])


def test_kernels_give_the_same_values_partition_by_partition():
    """Any chunk of complete users is valid input, so a cluster can split the work by user."""
    from rankeval.build.stages import build
    from rankeval.io.frames import MemoryTable
    from rankeval.io.load import load_predictions, load_truth
    from rankeval.kernels.metrics import compute
    from rankeval.names import expand
    from rankeval.settings import make_settings

    from .datagen import generate

    preds, truth = generate(seed=3, n_users=300, n_items=80, list_len=15, judged=12)
    ks = [1, 5, 10]
    built = build(
        load_predictions(MemoryTable(preds, "p")),
        load_truth(MemoryTable(truth, "t")),
        make_settings([*PLAIN, "ndcg@all"], ks),  # every metric: judgements too
    )
    specs = expand([*PLAIN, "ndcg@all", "map@all"], ks)
    conv = make_settings(gain="exponential", ap_denominator="min", rr_target="most-relevant")
    whole = compute(built.chunk, specs, conv)
    n = built.chunk.n_users
    cuts = [0, 1, n // 3, n // 2, n]
    parts = [compute(built.chunk.users(a, b), specs, conv) for a, b in itertools.pairwise(cuts)]
    for spec in specs:
        joined = np.concatenate([p[spec] for p in parts])
        np.testing.assert_array_equal(joined, whole[spec])


def test_at_all_uses_the_whole_list():
    truth = {"u": {"A": 1, "B": 1, "C": 1}}
    preds = {"u": ["X", "A", "Y", "Z", "B"]}
    r = one(preds, truth, ["precision@all", "recall@all", "mrr@all", "map@all", "ndcg@all"], 2)
    assert r.metrics["precision@all"] == pytest.approx(2 / 5)
    assert r.metrics["recall@all"] == pytest.approx(2 / 3)
    assert r.metrics["mrr@all"] == pytest.approx(1 / 2)
    assert r.metrics["map@all"] == pytest.approx((1 / 2 + 2 / 5) / 3)  # over R, like trec_eval
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)  # the whole truth, not cut
    assert r.metrics["ndcg@all"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(6)) / idcg)
    assert r.to_dict()["inputs"]["predictions"]["rows_beyond_k"] == 0  # nothing is cut
    assert list(r.summary.columns) == ["all"]


def test_r_precision_cuts_each_list_at_its_own_r():
    truth = {"u1": {"A": 1, "B": 1}, "u2": {"C": 1, "D": 0}}
    preds = {"u1": ["A", "X", "B"], "u2": ["X", "C"]}
    r = one(preds, truth, ["r_precision", "precision"], 3)
    assert r.per_user.set_index("user_id")["r_precision"].to_dict() == {"u1": 0.5, "u2": 0.0}
    assert list(r.summary.columns) == [3, "R"]


@pytest.mark.parametrize(
    ("ties", "first"), [("trec", "B"), ("item-asc", "A"), ("input", "A")]
)
def test_ties_option_orders_tied_scores(ties, first):
    frame = _scored([("u", "A", 1.0), ("u", "B", 1.0), ("u", "C", 2.0)])
    r = evaluate(frame, judged({"u": {first: 1}}), ["mrr"], 3, ties=ties)
    assert r.metrics["mrr@3"] == pytest.approx(1 / 2)
    assert r.to_dict()["settings"]["ties"] == ties
