"""Agreement with independent implementations (ranx, pytrec_eval) on generated data.

Conventions are aligned where they differ from rankeval's defaults: AP divides by R
(``ap_denominator="relevant"``) for both oracles; trec_eval leaves out users without
predictions (``skip_missing_users``). Only users both tools evaluate are compared, every value
of every user, and a test fails when an oracle returns nothing for a user it should score.
"""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval  # a missing oracle fails these tests; it never skips them
import ranx

from rankeval import evaluate

from .datagen import as_dicts, generate

# ranx compiles its numba kernels on first use (a minute on a machine without the cache): the
# tests that call it share one worker (make test's --dist loadgroup), which compiles them once.
pytestmark = pytest.mark.xdist_group("ranx")

CASES = [  # seed, users, items, list length, max judged per user
    (1, 40, 60, 15, 8),
    (2, 200, 500, 30, 20),
    (3, 25, 12, 12, 12),  # short catalogue: lists hold every item
    (4, 500, 2000, 10, 5),
]
KS = [1, 3, 5, 10, 20]


def _per_user(result, name):
    return dict(zip(result.per_user["user_id"], result.per_user[name], strict=True))


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c[0]}" for c in CASES])
def test_agrees_with_pytrec_eval(case):
    preds, truth = generate(*case)
    qrels, run = as_dicts(preds, truth)
    ours = evaluate(preds, truth, ["precision", "recall", "map", "ndcg", "hit_rate", "mrr"],
                    k=KS, ap_denominator="relevant", skip_missing_users=True)
    measures = set()
    for k in KS:
        measures |= {f"P.{k}", f"recall.{k}", f"map_cut.{k}", f"ndcg_cut.{k}", f"success.{k}"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    # recip_rank is not cut in trec_eval: give it each run cut at K.
    rr = {k: pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {u: dict(sorted(d.items(), key=lambda kv: -kv[1])[:k]) for u, d in run.items()})
        for k in KS}
    users = list(ours.per_user["user_id"])
    assert len(users) > 10
    compared = 0
    for k in KS:
        pairs = {
            f"precision@{k}": f"P_{k}", f"recall@{k}": f"recall_{k}",
            f"map@{k}": f"map_cut_{k}", f"ndcg@{k}": f"ndcg_cut_{k}",
            f"hit_rate@{k}": f"success_{k}",
        }
        for mine, trec in pairs.items():
            values = _per_user(ours, mine)
            for user in users:
                assert user in theirs, f"pytrec_eval did not score {user}"
                assert values[user] == pytest.approx(theirs[user][trec], abs=1e-9), (mine, user)
                compared += 1
        values = _per_user(ours, f"mrr@{k}")
        for user in users:
            assert values[user] == pytest.approx(rr[k][user]["recip_rank"], abs=1e-9)
            compared += 1
        for mine, trec in pairs.items():
            mean = np.mean([theirs[u][trec] for u in users])
            assert ours.metrics[mine] == pytest.approx(mean, abs=1e-9)
    assert compared >= 6 * len(KS) * len(users)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"seed{c[0]}" for c in CASES])
def test_agrees_with_ranx(case):
    preds, truth = generate(*case)
    qrels_dict, run_dict = as_dicts(preds, truth)
    names = ["precision", "recall", "f1", "hit_rate", "mrr", "map", "ndcg", "dcg"]
    ours = evaluate(preds, truth, names, k=KS, ap_denominator="relevant")
    users = list(ours.per_user["user_id"])
    # ranx keeps only users with a relevant item, like rankeval; its make_comparable gives
    # users without predictions an empty list, scored 0 as rankeval does by default.
    qrels = ranx.Qrels.from_dict({u: qrels_dict[u] for u in users})
    run = ranx.Run.from_dict(run_dict)
    metrics = [f"{n}@{k}" for n in names for k in KS]
    ranx.evaluate(qrels, run, metrics, make_comparable=True, return_mean=False)
    for metric in metrics:
        values = _per_user(ours, metric)
        scored = run.scores[metric]
        for user in users:
            assert user in scored, f"ranx did not score {user} on {metric}"
            assert values[user] == pytest.approx(scored[user], abs=1e-9), (metric, user)
        assert ours.metrics[metric] == pytest.approx(np.mean([scored[u] for u in users]),
                                                     abs=1e-9)


@pytest.mark.slow
def test_exponential_gain_agrees_with_ranx_burges():
    preds, truth = generate(7, 100, 300, 20, 10)
    qrels_dict, run_dict = as_dicts(preds, truth)
    ours = evaluate(preds, truth, ["ndcg", "dcg"], k=[5, 10], gain="exponential")
    users = list(ours.per_user["user_id"])
    qrels = ranx.Qrels.from_dict({u: qrels_dict[u] for u in users})
    run = ranx.Run.from_dict(run_dict)
    for k in (5, 10):
        for mine, theirs in ((f"ndcg@{k}", f"ndcg_burges@{k}"), (f"dcg@{k}", f"dcg_burges@{k}")):
            ranx.evaluate(qrels, run, [theirs], make_comparable=True, return_mean=False)
            values = _per_user(ours, mine)
            for user in users:
                assert values[user] == pytest.approx(run.scores[theirs][user], abs=1e-9)
