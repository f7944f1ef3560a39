"""Click models for simulated interleaving (#51.4): the cascade/DCM model's click patterns
against their exact chances, enumerated; the position-based model's click rates against
examine x click; empty slots never clicked."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from rankeval.analysis.clicks import NONE, USERS, cascade, pbm
from rankeval.errors import OptionError


def _chance(grades, pattern, click, stop) -> float:
    """The chance of ``pattern`` summed over the user's stop decisions, by recursion."""
    def go(i: int, reading: bool) -> float:
        if i == len(grades):
            return 1.0
        g, c = grades[i], pattern[i]
        if not reading or g == NONE:
            return 0.0 if c else go(i + 1, False)
        if not c:
            return (1 - click[g]) * go(i + 1, True)
        return click[g] * (stop[g] * go(i + 1, False) + (1 - stop[g]) * go(i + 1, True))
    return go(0, True)


@pytest.mark.parametrize("user", sorted(USERS))
@pytest.mark.parametrize("grades", [[4, 0, 2], [1, 3, NONE], [0, 0, 0]])
def test_cascade_patterns_have_their_exact_chances(user, grades):
    click, stop = USERS[user]
    exact = {p: _chance(grades, p, click, stop) for p in
             itertools.product([False, True], repeat=len(grades))}
    draws = 40_000
    clicks = cascade(np.array([grades] * draws), click, stop, np.random.default_rng(3))
    seen = {p: 0 for p in exact}
    for row in map(tuple, clicks.tolist()):
        seen[row] += 1
    possible = [p for p in exact if exact[p] > 0]
    assert all(seen[p] == 0 for p in exact if exact[p] == 0)
    if len(possible) > 1:
        observed = [seen[p] for p in possible]
        expected = [exact[p] * draws for p in possible]
        assert chisquare(observed, expected).pvalue > 1e-3, (observed, expected)


def test_the_classic_cascade_clicks_at_most_once():
    clicks = cascade(np.full((5000, 6), 4), (0.5,) * 5, (1.0,) * 5, np.random.default_rng(0))
    assert clicks.sum(axis=1).max() == 1
    first = clicks.argmax(axis=1)[clicks.any(axis=1)]
    # the first click's position is geometric: half the clicks at the top
    assert abs((first == 0).mean() - 0.5 / (1 - 0.5**6)) < 0.03


def test_pbm_rates_are_examine_times_click():
    rng = np.random.default_rng(1)
    grades = rng.integers(0, 5, (200_000, 5))
    grades[:, 4][rng.random(200_000) < 0.3] = NONE
    click = (0.05, 0.3, 0.5, 0.7, 0.95)
    clicks = pbm(grades, click, rng)
    assert not clicks[grades == NONE].any()
    for i in range(5):
        for g in range(5):
            here = grades[:, i] == g
            want = click[g] / (i + 1)
            sd = np.sqrt(want * (1 - want) / here.sum())
            assert abs(clicks[here, i].mean() - want) < 5 * sd + 1e-12, (i, g)


def test_a_grade_beyond_the_table_is_named():
    with pytest.raises(OptionError, match="grades 0 to 4, but the truth has grade 5"):
        cascade(np.array([[5, 1]]), *USERS["perfect"], np.random.default_rng(0))
    with pytest.raises(OptionError, match=r"must lie in \[0, 1\]"):
        pbm(np.array([[1, 1]]), (0.1, 1.5), np.random.default_rng(0))
