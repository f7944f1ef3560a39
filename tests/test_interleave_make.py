"""Team-draft interleaving and multileaving (SPEC §13, #51.1): the lists made for every query at
once against the exact distribution, enumerated from the definition (every order of the
rankers in every round, equally likely), by chi-square on many draws; and the invariants that
hold for any input."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from rankeval.analysis.interleaving import balanced_credits
from rankeval.build.interleave import NONE, balanced, team_draft


def _exact(lists: list[list[int]], k: int) -> dict[tuple, float]:
    """(items, teams) -> probability, from the definition, by enumeration."""
    out: Counter = Counter()

    def rounds(items: list[int], teams: list[int], pointers: list[int], chance: float) -> None:
        if len(items) == k:
            out[tuple(items), tuple(teams)] += chance
            return
        orders = list(itertools.permutations(range(len(lists))))
        for order in orders:
            its, tms, ptr, picked = list(items), list(teams), list(pointers), False
            for r in order:
                if len(its) == k:
                    break
                while ptr[r] < len(lists[r]) and lists[r][ptr[r]] in its:
                    ptr[r] += 1
                if ptr[r] < len(lists[r]):
                    its.append(lists[r][ptr[r]])
                    tms.append(r)
                    ptr[r] += 1
                    picked = True
            if picked:
                rounds(its, tms, ptr, chance / len(orders))
            else:
                out[tuple(its), tuple(tms)] += chance / len(orders)

    rounds([], [], [0] * len(lists), 1.0)
    return dict(out)


def _array(lists: list[list[int]], queries: int) -> np.ndarray:
    depth = max(map(len, lists))
    one = np.full((len(lists), depth), NONE)
    for r, lst in enumerate(lists):
        one[r, :len(lst)] = lst
    return np.repeat(one[:, None, :], queries, axis=1)


CASES = [
    ([[1, 2, 3, 4], [2, 5, 1, 6]], 4),  # overlapping lists (Radlinski et al.'s kind)
    ([[1, 2, 3], [4, 5, 6]], 5),  # disjoint
    ([[1, 2], [1, 2, 3, 4, 5]], 5),  # one list used up early, the other goes on
    ([[7, 8, 9], [8, 7, 10], [10, 9, 11]], 5),  # multileaving, three rankers
]


@pytest.mark.parametrize(("lists", "k"), CASES)
def test_the_lists_follow_the_definitions_distribution(lists, k):
    exact = _exact(lists, k)
    draws = 20_000
    items, teams = team_draft(_array(lists, draws), k, np.random.default_rng(13))
    seen = Counter((tuple(i[i != NONE]), tuple(t[t != NONE])) for i, t in
                   zip(items, teams, strict=True))
    assert set(seen) <= set(exact), set(seen) - set(exact)
    keys = sorted(exact)
    observed = [seen[key] for key in keys]
    expected = [exact[key] * draws for key in keys]
    assert chisquare(observed, expected).pvalue > 1e-3, (observed, expected)


def test_every_query_at_once_holds_the_invariants():
    """Random lists of different lengths: each slot's item comes from its team's list, each
    team's items keep their ranker's order, no item is shown twice, lists end at k or when
    every ranker is used up, and two rankers' teams differ by at most one while both last."""
    rng = np.random.default_rng(5)
    rankers, queries, depth, k = 2, 3000, 12, 10
    lists = np.full((rankers, queries, depth), NONE)
    for r in range(rankers):
        for q in range(queries):
            n = rng.integers(0, depth + 1)
            lists[r, q, :n] = rng.choice(30, n, replace=False)
    items, teams = team_draft(lists, k, rng)
    for q in range(queries):
        shown = [(i, t) for i, t in zip(items[q], teams[q], strict=True) if i != NONE]
        got = [i for i, _ in shown]
        assert len(got) == len(set(got))
        union = {int(x) for r in range(rankers) for x in lists[r, q] if x != NONE}
        assert len(got) == min(k, len(union))
        for r in range(rankers):
            own = [i for i, t in shown if t == r]
            ranked = [int(x) for x in lists[r, q] if x != NONE]
            assert own == [x for x in ranked if x in own]  # in the ranker's order
        counts = [sum(t == r for _, t in shown) for r in range(rankers)]
        # an item never becomes unshown: a ranker with one left at the end never sat out
        left = [any(x != NONE and x not in got for x in lists[r, q]) for r in range(rankers)]
        if all(left):
            assert abs(counts[0] - counts[1]) <= 1


def test_seeded():
    lists = _array([[1, 2, 3], [3, 2, 1]], 50)
    one = team_draft(lists, 3, np.random.default_rng(1))
    two = team_draft(lists, 3, np.random.default_rng(1))
    assert all((a == b).all() for a, b in zip(one, two, strict=True))


def _balanced_reference(a: list[int], b: list[int], k: int, a_first: bool) -> list[int]:
    """Joachims's balanced interleaving, as written (a list that ends leaves the rest to the
    other)."""
    shown: list[int] = []
    ka = kb = 0
    while len(shown) < k and (ka < len(a) or kb < len(b)):
        take_a = kb >= len(b) or (ka < len(a) and (ka < kb or (ka == kb and a_first)))
        item = a[ka] if take_a else b[kb]
        if item not in shown:
            shown.append(item)
        if take_a:
            ka += 1
        else:
            kb += 1
    return shown


def test_balanced_is_joachims_for_every_query():
    rng = np.random.default_rng(8)
    queries, depth, k = 2000, 8, 6
    lists = np.full((2, queries, depth), NONE)
    for r in range(2):
        for q in range(queries):
            n = rng.integers(0, depth + 1)
            lists[r, q, :n] = rng.choice(12, n, replace=False)
    coin = np.random.default_rng(99)
    items = balanced(lists, k, coin)
    firsts = np.random.default_rng(99).random(queries) < 0.5  # the same coins
    for q in range(queries):
        a, b = ([int(x) for x in lists[r, q] if x != NONE] for r in range(2))
        want = _balanced_reference(a, b, k, bool(firsts[q]))
        assert [int(x) for x in items[q] if x != NONE] == want


def test_balanced_credit_by_hand_and_by_brute_force():
    # A = (a b c d), B = (b e a f), A first: shown a b e c d; clicks on b and c.
    # The lowest click, c, is 3rd in A and absent from B: k = 3. A's top 3 (a b c) holds both
    # clicks, B's (b e a) one: A wins, 2 to 1.
    credit = balanced_credits(np.zeros(5, dtype=int), np.arange(1, 6),
                              np.array([1, 2, np.inf, 3, 4]), np.array([3, 1, 2, np.inf, np.inf]),
                              np.array([0, 1, 0, 1, 0], dtype=bool), 1)
    assert credit.tolist() == [[2, 1]]
    rng = np.random.default_rng(4)
    impressions, slots = 500, 6
    imp = np.repeat(np.arange(impressions), slots)
    pos = np.tile(np.arange(1, slots + 1), impressions)
    ra = np.where(rng.random(len(imp)) < 0.8, rng.integers(1, 10, len(imp)), np.inf)
    rb = np.where(rng.random(len(imp)) < 0.8, rng.integers(1, 10, len(imp)), np.inf)
    clicked = rng.random(len(imp)) < 0.3
    got = balanced_credits(imp, pos, ra, rb, clicked, impressions)
    for i in range(impressions):
        rows = [j for j in np.flatnonzero(imp == i) if clicked[j]]
        if not rows:
            assert got[i].tolist() == [0, 0]
            continue
        low = max(rows, key=lambda j: pos[j])
        cut = min(ra[low], rb[low])
        assert got[i].tolist() == [sum(ra[j] <= cut for j in rows), sum(rb[j] <= cut for j in rows)]


def _probabilistic_exact(lists: list[list[int]], k: int, tau: float) -> dict[tuple, float]:
    """(items, teams) -> chance under probabilistic interleaving, by enumeration: a ranker
    drawn among those with an item left, an item from its softmax over the unshown."""
    out: dict[tuple, float] = {}

    def go(items: tuple, teams: tuple, chance: float) -> None:
        left = [[(d, (r + 1) ** -tau) for r, d in enumerate(lst) if d not in items]
                for lst in lists]
        able = [i for i, lst in enumerate(left) if lst]
        if len(items) == k or not able:
            out[items, teams] = out.get((items, teams), 0.0) + chance
            return
        for ranker in able:
            total = sum(w for _, w in left[ranker])
            for d, w in left[ranker]:
                go((*items, d), (*teams, ranker), chance / len(able) * w / total)

    go((), (), 1.0)
    return out


@pytest.mark.parametrize(("lists", "k"), [([[1, 2, 3], [3, 1, 2]], 3),
                                          ([[1, 2], [3, 4, 1]], 3)])
def test_probabilistic_lists_follow_the_definition(lists, k):
    from rankeval.build.interleave import probabilistic

    exact = _probabilistic_exact(lists, k, 3.0)
    draws = 30_000
    items, teams, chances = probabilistic(_array(lists, draws), k, np.random.default_rng(2))
    seen = Counter((tuple(int(x) for x in i if x != NONE), tuple(int(t) for t in tm if t != NONE))
                   for i, tm in zip(items, teams, strict=True))
    assert set(seen) <= set(exact)
    keys = [key for key in sorted(exact) if exact[key] * draws >= 5]  # chi-square's cells
    observed = [seen[key] for key in keys]
    expected = [exact[key] * draws for key in keys]
    scale = sum(observed) / sum(expected)
    assert chisquare(observed, [e * scale for e in expected]).pvalue > 1e-3
    # each slot's chance of each ranker: its softmax over the items not yet shown
    for q in range(50):
        shown: list[int] = []
        for slot in range(k):
            d = int(items[q, slot])
            for r, lst in enumerate(lists):
                weights = {x: (i + 1) ** -3.0 for i, x in enumerate(lst) if x not in shown}
                want = weights.get(d, 0.0) / sum(weights.values()) if weights else 0.0
                assert chances[q, slot, r] == pytest.approx(want, abs=1e-12)
            shown.append(d)


def test_probabilistic_outcomes_marginalise_every_assignment():
    """By brute force over the 2^slots assignments, each weighted by the product of its
    rankers' chances."""
    from rankeval.analysis.interleaving import probabilistic_outcomes

    rng = np.random.default_rng(6)
    impressions, slots = 300, 5
    chances = rng.random((impressions, slots, 2))
    chances[rng.random((impressions, slots)) < 0.2, 0] = 0.0  # an item only b could pick
    clicked = rng.random((impressions, slots)) < 0.4
    got = probabilistic_outcomes(chances, clicked)
    for i in range(impressions):
        want, total = np.zeros(3), 0.0
        clicks = [s for s in range(slots) if clicked[i, s]]
        for assign in itertools.product([0, 1], repeat=slots):
            weight = float(np.prod([chances[i, s, a] for s, a in enumerate(assign)]))
            total += weight
            ca = sum(assign[s] == 0 for s in clicks)
            cb = len(clicks) - ca
            if clicks:
                want[0 if ca > cb else 1 if cb > ca else 2] += weight
        np.testing.assert_allclose(got[i], want / total, atol=1e-9)


def test_a_fractional_log_judges_as_its_codes_do():
    from rankeval.analysis.interleaving import preference

    codes = np.array([1, 1, -1, 0, -2, 1], dtype=np.int8)
    triple = np.stack([codes == 1, codes == -1, codes == 0], axis=1).astype(float)
    group = np.array([0, 0, 1, 1, 2, 3])
    one, two = preference(codes, group, seed=1), preference(triple, group, seed=1)
    assert (one.wins, one.losses, one.ties, one.no_click, one.delta, one.low, one.high) == \
        (two.wins, two.losses, two.ties, two.no_click, two.delta, two.low, two.high)
    assert not math.isnan(one.p_value) and math.isnan(two.p_value)
