"""Simulation with a known truth (#51's oracles): for rankers whose true preference is set by
the click model (a long simulation measures it), the outcome agrees with the truth in at least
95% of seeded trials at the impressions the planner asked for, the sign test finds it about
as often as the planned power promises, Delta's bootstrap interval covers the true value at
about its nominal rate, and multileaving orders three rankers as the truth does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rankeval import interleave
from rankeval.analysis.interleaving import preference
from rankeval.api.interleave import RunLists, grades_of, simulated_outcomes
from rankeval.io.load import load_truth, open_input

QUERIES, ITEMS = 40, 10


def _world(noises: tuple[float, ...], seed: int = 3) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """Runs ordering each query's items by grade plus noise of each size, and the grades."""
    rng = np.random.default_rng(seed)
    runs: list[list[tuple]] = [[] for _ in noises]
    qrels = []
    for q in range(QUERIES):
        grades = rng.choice(5, size=ITEMS, p=[0.4, 0.25, 0.15, 0.12, 0.08])
        qrels += [(f"q{q}", f"d{q}-{i}", int(g)) for i, g in enumerate(grades)]
        for rows, noise in zip(runs, noises, strict=True):
            order = np.argsort(-(grades + rng.normal(0, noise, ITEMS)), kind="stable")
            rows += [(f"q{q}", f"d{q}-{i}", r) for r, i in enumerate(order, 1)]
    frames = [pd.DataFrame(r, columns=["user_id", "item_id", "rank"]) for r in runs]
    return frames, pd.DataFrame(qrels, columns=["user_id", "item_id", "relevance"])


def _truth(runs, qrels, method: str, model: str, params: dict) -> dict:
    """Each pair's true Delta: 200,000 simulated impressions."""
    sim = interleave.simulate(runs, qrels, click_model=model, method=method, k=5,
                              impressions=200_000, trials=1, seed=99, **params)
    return {(p["a"], p["b"]): p["delta"] for p in sim.pairs}


@pytest.mark.slow
@pytest.mark.parametrize(("method", "model", "params"), [
    ("team-draft", "cascade", {}),
    ("team-draft", "dcm", {"user": "informational"}),
    ("probabilistic", "pbm", {"user": "perfect"}),
    ("balanced", "cascade", {"user": "perfect"}),
])
def test_the_planned_impressions_find_the_truth(method, model, params):
    runs, qrels = _world((0.3, 1.5))
    true = _truth(runs, qrels, method, model, params)[("run1", "run2")]
    assert true > 0.02  # the less noisy ranker is preferred, clearly
    pilot = interleave.simulate(runs, qrels, click_model=model, method=method, k=5,
                                impressions=400, trials=10, seed=1, **params).pairs[0]
    needed = int(np.ceil(pilot["impressions_needed"]))
    assert 10 < needed < 20_000
    trials = interleave.simulate(runs, qrels, click_model=model, method=method, k=5,
                                 impressions=needed, trials=200, seed=2, **params).pairs[0]
    assert trials["delta"] > 0 and trials["agree"] >= 0.95
    if trials["significant"] is not None:  # the sign test's power, planned for 80%
        assert trials["significant"] >= 0.6


@pytest.mark.slow
def test_the_interval_covers_the_true_delta_at_its_nominal_rate():
    runs, qrels = _world((0.3, 1.2))
    true = _truth(runs, qrels, "team-draft", "cascade", {"user": "navigational"})
    truth = load_truth(open_input(qrels, "truth"))
    data = RunLists(runs, None, None, 5, truth.user, truth.item)
    t_user, t_item = data.extra
    grade = np.asarray(truth.relevance, dtype=np.int64)
    params = {"click": [0.05, 0.3, 0.5, 0.7, 0.95], "stop": [1.0] * 5}
    rng = np.random.default_rng(8)
    pool = np.flatnonzero(data.has)
    covered = []
    for trial in range(150):
        drawn = pool[rng.integers(0, len(pool), 600)]
        outcome = simulated_outcomes(data.lists[:, drawn, :], drawn, "team-draft", 5, 3.0, rng,
                                     lambda q, i: grades_of(data, q, i, t_user, t_item, grade),
                                     "cascade", params)[0, 1]
        p = preference(outcome, drawn, rounds=1000, seed=trial)
        covered.append(p.low <= true[("run1", "run2")] <= p.high)
    assert 0.88 <= np.mean(covered) <= 0.99


@pytest.mark.slow
def test_multileaving_orders_three_rankers_as_the_truth():
    runs, qrels = _world((0.2, 1.0, 3.0))
    true = _truth(runs, qrels, "team-draft", "dcm", {})
    assert all(v > 0 for v in true.values())  # run1 > run2 > run3
    sim = interleave.simulate(runs, qrels, click_model="dcm", k=5, impressions=2000,
                              trials=40, seed=5)
    for p in sim.pairs:
        assert p["delta"] > 0 and p["agree"] >= 0.95, p
