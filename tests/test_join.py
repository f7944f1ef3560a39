"""The join's fast paths (grades packed into sorted keys, blocks of users sorted apart on two
threads, ideal lists counted rather than sorted) against plain numpy written the obvious way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankeval.build import join

GRADES = {
    "binary": [0.0, 1.0],
    "graded": [0.0, 1.0, 2.0, 3.0],
    "wide": [0.0, 1.0, 17.0, 300.0],  # too many grades to count: the packed sort
    "negative": [-1.0, 0.0, 1.0, 2.0],  # trec_eval's "judged, not in the pool": not packable
    "fractional": [0.0, 0.5, 1.0, 2.25],
}


def _reference_pairs(user, item, rel, n_items):
    key = user.astype(np.int64) * n_items + item
    positive = rel > 0
    order = np.lexsort((rel[positive], key[positive]))
    return key[positive][order], rel[positive][order]


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(sorted(GRADES)), st.booleans(), st.integers(1, 4))
def test_truth_pairs_equal_the_reference(data, grades, user_sorted, block):
    n = data.draw(st.integers(1, 120))
    user = np.array(data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n)), np.int32)
    if user_sorted:
        user.sort()
    item = np.array(data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)), np.int32)
    rel = np.array(data.draw(st.lists(st.sampled_from(GRADES[grades]), min_size=n,
                                      max_size=n)))
    original = join._BLOCK
    join._BLOCK = block  # many blocks: every user boundary is a block edge
    try:
        keys, values, dup = join.truth_pairs(user, item, rel.copy(), 31)
    finally:
        join._BLOCK = original
    pair = user.astype(np.int64) * 31 + item
    expected_dup = [i for i in range(n) if pair[i] in pair[:i]]
    assert dup.tolist() == expected_dup
    if not expected_dup:  # repeats are an error: only then are the pairs an answer
        ref_keys, ref_values = _reference_pairs(user, item, rel, 31)
        assert keys.tolist() == ref_keys.tolist()
        assert values.tolist() == ref_values.tolist()
        assert values.dtype == np.float64


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["binary", "graded", "wide", "fractional"]))
def test_ideal_lists_equal_a_sort(data, grades):
    n = data.draw(st.integers(1, 150))
    user = np.sort(np.array(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)),
                            dtype=np.int64))
    positive = [g for g in GRADES[grades] if g > 0]
    rel = np.array(data.draw(st.lists(st.sampled_from(positive), min_size=n, max_size=n)))
    order = np.lexsort((-rel, user))
    iu, irel = join.ideal_lists(user.copy(), rel.copy())
    assert iu.tolist() == user[order].tolist()
    assert irel.tolist() == rel[order].tolist()
    assert irel.dtype == np.float64


def test_a_few_grades_over_many_users_are_counted(monkeypatch):
    """At scale the counting path is taken (it calls bincount) and equals a sort."""
    rng = np.random.default_rng(3)
    user = np.sort(rng.integers(0, 100_000, 400_000))
    rel = rng.integers(1, 4, len(user)).astype(np.float64)
    expected = np.lexsort((-rel, user))
    calls = []
    bincount = np.bincount
    monkeypatch.setattr(np, "bincount", lambda *a, **k: calls.append(1) or bincount(*a, **k))
    iu, irel = join.ideal_lists(user.copy(), rel.copy())
    assert calls
    assert (iu == user[expected]).all() and (irel == rel[expected]).all()


@pytest.mark.parametrize("sorted_users", [True, False])
def test_sort_keys_sorts_in_place(sorted_users):
    rng = np.random.default_rng(4)
    user = rng.integers(0, 5_000, 3 * join._BLOCK)
    if sorted_users:
        user.sort()
    keys = user * 1_000 + rng.integers(0, 1_000, len(user))
    expected = np.sort(keys)
    join.sort_keys(keys, user)
    assert (keys == expected).all()


@settings(max_examples=150, deadline=None)
@given(st.data(), st.sampled_from(["binary", "graded", "wide", "fractional"]),
       st.integers(1, 6))
def test_ideal_lists_are_cut_at_k_with_each_users_highest(data, grades, kmax):
    n_users = data.draw(st.integers(1, 30))
    n = data.draw(st.integers(0, 120))
    user = np.sort(np.array(data.draw(st.lists(st.integers(0, n_users - 1), min_size=n,
                                               max_size=n)), dtype=np.int64))
    positive = [g for g in GRADES[grades] if g > 0]
    rel = np.array(data.draw(st.lists(st.sampled_from(positive), min_size=n, max_size=n)),
                   dtype=np.float64)
    iu, ipos, irel, top = join.ideal(user.copy(), rel.copy(), n_users, kmax)
    rows = []
    for u in range(n_users):
        mine = sorted(rel[user == u].tolist(), reverse=True)
        assert top[u] == (mine[0] if mine else -np.inf)
        rows += [(u, p, r) for p, r in enumerate(mine[:kmax], start=1)]
    assert list(zip(iu.tolist(), ipos.tolist(), irel.tolist(), strict=True)) == rows


@settings(max_examples=100, deadline=None)
@given(st.data(), st.booleans(), st.booleans(), st.integers(2, 9))
def test_repeats_flag_every_later_row_of_a_pair(data, grouped, through_rows, n_items):
    """``repeats`` (blocks of whole users, a hash test before any sort) flags exactly the
    rows whose (user, item) an earlier row of the list had: a reference of plain Python."""
    lengths = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=25))
    users = np.repeat(np.arange(len(lengths)), lengths)
    if grouped:  # each user's rows together, users in no order
        users = np.repeat(np.random.default_rng(len(users)).permutation(len(lengths)), lengths)
    item = np.array(data.draw(st.lists(st.integers(0, n_items - 1), min_size=len(users),
                                       max_size=len(users))), dtype=np.int32)
    rows = None
    if through_rows:  # the ordered rows pick items out of the file's rows
        rows = np.random.default_rng(7).permutation(len(users))
        file_item = np.empty_like(item)
        file_item[rows] = item
        item = file_item
    seen, expected = set(), []
    for r, u in enumerate(users.tolist()):
        pair = (u, int(item[r] if rows is None else item[rows[r]]))
        expected.append(pair in seen)
        seen.add(pair)
    old = join._BLOCK
    join._BLOCK = 8  # several blocks, each of whole users
    try:
        flags = join.repeats(users.astype(np.int32), item, rows, n_items)
    finally:
        join._BLOCK = old
    assert (flags is None) == (not any(expected))
    if flags is not None:
        assert flags.tolist() == expected
