"""Interleaving outcomes (SPEC §13, #51): credit from a slot log, Delta_AB, the sign test by
brute force, the bootstrap interval's coverage where the true preference is known, and every
pair of a multileaved log."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rankeval.analysis.interleaving import credits, delta, outcomes, preference, preferences


def _log(per_impression: list[tuple[int, int]]):
    """Slots of impressions whose clicked slots are (A's, B's) as given, each impression with
    two unclicked slots per team besides: (impression, team, clicked) per slot."""
    rows = []
    for i, (ca, cb) in enumerate(per_impression):
        for team, clicks in ((0, ca), (1, cb)):
            rows += [(i, team, True)] * clicks + [(i, team, False)] * 2
    imp, team, clicked = (np.array(x) for x in zip(*rows, strict=True))
    return imp, team, clicked


def test_worked_example_13():
    """15 impressions: 7 won by A, 3 by B, 2 ties, 3 without a click."""
    shown = [(2, 0)] * 4 + [(1, 0)] * 3 + [(0, 1)] * 2 + [(1, 3)] + [(1, 1), (2, 2)] + [(0, 0)] * 3
    imp, team, clicked = _log(shown)
    credit = credits(imp, team, clicked, len(shown), 2)
    assert credit.tolist() == [list(x) for x in shown]
    result = preference(outcomes(credit, 0, 1), np.arange(len(shown)), rounds=2000)
    assert (result.wins, result.losses, result.ties, result.no_click) == (7, 3, 2, 3)
    assert result.delta == pytest.approx(1 / 6, abs=1e-12)  # (7 + 1) / 12 - 0.5
    assert result.p_value == pytest.approx(0.34375, abs=1e-12)
    assert result.low < result.delta < result.high


@pytest.mark.parametrize("planned", [False, True])
def test_a_reported_pair_is_the_judged_preference_with_its_rankers_named(planned):
    """The report's pair (results.interleaving.PairResult) is the analysis' Preference, one
    type, its rankers named: every field carried over, none copied by position."""
    from dataclasses import asdict, fields

    from rankeval.analysis.interleave_judge import Pair
    from rankeval.analysis.interleaving import Plan, Preference
    from rankeval.results.interleaving import PairResult

    shown = [(2, 0)] * 4 + [(0, 1)] * 2 + [(1, 1), (0, 0)]
    imp, team, clicked = _log(shown)
    judged = preference(outcomes(credits(imp, team, clicked, len(shown), 2), 0, 1),
                        np.arange(len(shown)), a=1, b=0, rounds=200)
    plan = Plan(0.1, 0.05, 0.8, 10.5, 12.0, 0.125, 1.5) if planned else None
    pair = PairResult.named(Pair(judged, 0.25, plan), ("base", "new"))
    assert issubclass(PairResult, Preference)
    assert (pair.a, pair.b, pair.p_adjusted) == ("new", "base", 0.25)
    assert {f.name: getattr(pair, f.name) for f in fields(Preference) if f.name not in ("a", "b")} \
        == {k: v for k, v in asdict(judged).items() if k not in ("a", "b")}
    assert pair.plan == (None if plan is None else {"decided": 10.5, "impressions": 12.0,
                                                    "no_click_share": 0.125,
                                                    "design_effect": 1.5})


@pytest.mark.parametrize(("wins", "losses"), [(7, 3), (0, 5), (12, 12), (30, 11), (1, 0)])
def test_the_sign_test_is_the_binomial_by_brute_force(wins, losses):
    n = wins + losses
    tail = min(wins, losses)
    p = sum(math.comb(n, k) for k in range(tail + 1)) / 2**n
    brute = min(1.0, 2 * p) if wins != losses else 1.0
    outcome = np.array([1] * wins + [-1] * losses + [0] * 3, dtype=np.int8)
    assert preference(outcome, np.arange(len(outcome)), rounds=100).p_value == \
        pytest.approx(brute, abs=1e-12)


def test_the_interval_covers_the_true_preference():
    """600 experiments of 200 queries, each with 1 to 6 impressions whose outcome is a win,
    loss, tie or no click with known chances, a per-query shift making impressions of one
    query alike: the 95% interval covers the true Delta in 92-97.5% of them (a percentile
    bootstrap over 200 groups covers a little under its level: 92.8-96% over four seeds)."""
    rng = np.random.default_rng(51)
    chances = np.array([0.35, 0.25, 0.1, 0.3])  # win, loss, tie, no click
    truth = (chances[0] + chances[2] / 2) / chances[:3].sum() - 0.5
    covered, trials = 0, 600
    for _ in range(trials):
        per_query = rng.integers(1, 7, 200)
        group = np.repeat(np.arange(200), per_query)
        shift = rng.normal(0, 0.1, 200)[group]  # queries differ; the mean chance stays
        u = np.clip(rng.random(len(group)) + shift, 0, 1 - 1e-12)
        u = np.where(rng.random(len(group)) < 0.5, u, rng.random(len(group)))
        outcome = np.array([1, -1, 0, -2], dtype=np.int8)[
            np.searchsorted(np.cumsum(chances), u, side="right")]
        result = preference(outcome, group, rounds=1000, seed=int(rng.integers(1 << 30)))
        covered += result.low <= truth <= result.high
    assert 0.92 <= covered / trials <= 0.975, covered / trials


def test_the_interval_is_seeded_and_the_values_are_plain():
    outcome = np.array([1, 1, -1, 0, -2, 1, -1, 1], dtype=np.int8)
    group = np.array([0, 0, 1, 1, 2, 3, 3, 4])
    one = preference(outcome, group, seed=3)
    assert one == preference(outcome, group, seed=3)
    assert one.groups == 4  # the query without a click is not a group of the decided ones


def test_multileaving_judges_every_pair_as_two_rankers_would():
    rng = np.random.default_rng(0)
    impressions, rankers = 400, 3
    imp = np.repeat(np.arange(impressions), 6)
    team = np.tile(np.arange(rankers).repeat(2), impressions)
    clicked = rng.random(len(imp)) < np.array([0.3, 0.2, 0.1])[team]
    credit = credits(imp, team, clicked, impressions, rankers)
    group = np.arange(impressions) // 4
    pairs = preferences(credit, group, rounds=500)
    assert [(p.a, p.b) for p in pairs] == [(0, 1), (0, 2), (1, 2)]
    for p in pairs:
        alone = preference(outcomes(credit[:, [p.a, p.b]], 0, 1), group, rounds=500)
        assert (alone.wins, alone.losses, alone.ties, alone.delta, alone.low, alone.high) == \
            (p.wins, p.losses, p.ties, p.delta, p.low, p.high)
    assert pairs[0].delta > 0 and pairs[1].delta > pairs[0].delta  # 0.3 > 0.2 > 0.1


def test_no_click_is_undefined():
    result = preference(np.array([-2, -2], dtype=np.int8), np.array([0, 1]))
    assert math.isnan(result.delta) and math.isnan(result.p_value) and math.isnan(result.low)
    assert result.no_click == 2 and result.groups == 0
    assert math.isnan(float(delta(0, 0, 0)))


def _draw(rng, chances, impressions: int) -> np.ndarray:
    return np.array([1, -1, 0, -2], dtype=np.int8)[
        np.searchsorted(np.cumsum(chances), rng.random(impressions), side="right")]


def test_the_planned_impressions_find_the_preference_as_often_as_promised():
    """A pilot of 5,000 impressions plans for 95% power at the true Delta; 400 experiments of
    the planned size then find it (the interval excludes 0 on the right side) in 92-99%
    (93-96% over four seeds: the pilot's own spread, and the trials')."""
    from rankeval.analysis.interleaving import impressions_needed

    rng = np.random.default_rng(13)
    chances = np.array([0.3, 0.22, 0.08, 0.4])  # win, loss, tie, no click
    truth = (chances[0] + chances[2] / 2) / chances[:3].sum() - 0.5
    pilot = _draw(rng, chances, 5000)
    plan = impressions_needed(pilot, np.arange(5000), truth, alpha=0.05, power=0.95)
    assert plan.design_effect == pytest.approx(1.0, abs=0.15)
    assert plan.no_click_share == pytest.approx(0.4, abs=0.03)
    size = math.ceil(plan.impressions)
    found = 0
    for _ in range(400):
        outcome = _draw(rng, chances, size)
        result = preference(outcome, np.arange(size), rounds=1000,
                            seed=int(rng.integers(1 << 30)))
        found += result.low > 0
    assert 0.92 <= found / 400 <= 0.99, (found / 400, size)


def test_clustered_impressions_need_more():
    from rankeval.analysis.interleaving import impressions_needed

    rng = np.random.default_rng(2)
    group = np.repeat(np.arange(400), 5)
    lean = np.where(rng.random(400) < 0.5, 0.25, -0.15)[group]  # queries that lean one way
    u = rng.random(len(group))
    outcome = np.where(u < 0.45 + lean, 1, -1).astype(np.int8)
    clustered = impressions_needed(outcome, group, 0.05)
    alone = impressions_needed(outcome, np.arange(len(group)), 0.05)
    assert clustered.design_effect > 1.5 and alone.design_effect == pytest.approx(1, abs=0.2)
    assert clustered.decided == pytest.approx(alone.decided / alone.design_effect
                                              * clustered.design_effect, rel=1e-9)
