"""Work done block by block (``join._BLOCK`` rows at a time) equals work done in one block.

Real inputs need millions of rows to span several blocks; here the block is made tiny, so that
every test input crosses many block edges, and the results must be identical, not close.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankeval import evaluate
from rankeval.build import join
from rankeval.build.lists import Lists
from rankeval.errors import InputError
from rankeval.kernels import chunk
from rankeval.registry import REGISTRY

from .datagen import generate

METRICS = [n for n, m in REGISTRY.items() if not m.needs]  # no --train here
KS = [1, 3, 10]


def _both(monkeypatch, preds, truth, **options):
    """(per-user table with one block, the same with blocks of 3 rows)."""
    whole = evaluate(preds, truth, METRICS, KS, **options)
    monkeypatch.setattr(join, "_BLOCK", 3)
    small = evaluate(preds, truth, METRICS, KS, **options)
    monkeypatch.undo()
    return whole, small


def _same(whole, small):
    pd.testing.assert_frame_equal(whole.per_user, small.per_user)
    assert whole.metrics == small.metrics
    assert whole.warnings == small.warnings


@pytest.mark.parametrize("grades", ["whole", "fractional"])
@pytest.mark.parametrize("shuffled", [False, True])
def test_blocks_change_nothing(monkeypatch, grades, shuffled):
    preds, truth = generate(5, 80, 50, 12, 9)
    if grades == "fractional":  # not packable into integer keys: the argsort path
        truth["relevance"] = truth["relevance"] * 0.75 - 0.25
    if shuffled:
        preds = preds.sample(frac=1.0, random_state=1)
        truth = truth.sample(frac=1.0, random_state=2)
    whole, small = _both(monkeypatch, preds, truth, zero_relevant_users="zero")
    assert len(whole.per_user) > 50
    _same(whole, small)


def test_dedupe_across_blocks(monkeypatch):
    preds, truth = generate(6, 60, 30, 10, 6)
    preds["rank"] = preds.groupby("user_id")["score"].rank(ascending=False).astype(int)
    repeats = preds.iloc[::7].assign(rank=lambda d: d["rank"] + 100)  # worse-ranked copies
    doubled = pd.concat([preds, repeats], ignore_index=True)
    whole, small = _both(monkeypatch, doubled, truth, dedupe=True)
    _same(whole, small)
    assert any(f"{len(repeats):,} repeated (user, item) rows" in w for w in small.warnings)
    # Dropping the worse-ranked copies is the same as never having had them.
    clean = evaluate(preds, truth, METRICS, KS)
    pd.testing.assert_frame_equal(clean.per_user, small.per_user)


def test_duplicate_error_names_the_same_rows(monkeypatch):
    preds, truth = generate(7, 30, 20, 8, 5)
    doubled = pd.concat([preds, preds.iloc[[3, 40]]], ignore_index=True)
    messages = []
    for block in (join._BLOCK, 3):
        monkeypatch.setattr(join, "_BLOCK", block)
        with pytest.raises(InputError) as err:
            evaluate(doubled, truth, ["ndcg"], 5)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "2 (user, item) pairs listed more than once" in messages[0]


@given(st.lists(st.integers(0, 4), max_size=400), st.integers(1, 90), st.randoms())
def test_blocks_cover_all_rows_and_never_split_a_user(codes, size, random):
    """Users sorted, or grouped in any order of the users (``Lists.grouped``); runs longer
    than the first window of the search back (64 rows) included."""
    su = np.sort(np.array(codes, dtype=np.int32))
    runs = np.split(su, np.flatnonzero(np.diff(su)) + 1) if len(su) else []
    random.shuffle(runs)
    su = np.concatenate(runs) if runs else su
    old, join._BLOCK = join._BLOCK, size
    try:
        blocks = join._blocks(su)
    finally:
        join._BLOCK = old
    assert blocks[0][0] == 0 and blocks[-1][1] == len(su)
    for (_, b), (c, _) in itertools.pairwise(blocks):
        assert b == c  # contiguous
        assert su[c - 1] != su[c]  # a block edge falls between two users
    assert all(a < b for a, b in blocks) or len(su) == 0

    def run_start(row):
        while row > 0 and su[row - 1] == su[row]:
            row -= 1
        return row

    if len(su) > size:  # blocks of about ``size`` rows: cut at each multiple's user
        edges = {0, len(su)} | {run_start(m) for m in range(size, len(su), size)}
        assert [a for a, _ in blocks] + [len(su)] == sorted(edges)


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 9)), max_size=200),
       st.sampled_from(["sorted", "runs", "scattered"]), st.randoms())
def test_sorted_keys_equal_one_sort_whatever_the_users_order(pairs, users, random):
    """``sort_keys`` (the truth's pairs): users in order, in runs in any order, or
    scattered all give numpy's sort; users in order are sorted block by block, within their
    blocks, and users out of order by one sort of the whole array."""
    user = np.array([u for u, _ in pairs], dtype=np.int32)
    item = np.array([i for _, i in pairs], dtype=np.int64)
    order = np.argsort(user, kind="stable")
    if users == "runs":  # each user's rows together, the users shuffled
        runs = np.split(order, np.flatnonzero(np.diff(user[order])) + 1) if len(order) else []
        random.shuffle(runs)
        order = np.concatenate(runs) if runs else order
    elif users == "scattered":
        order = np.array(random.sample(range(len(user)), len(user)), dtype=np.int64)
    user, item = user[order], item[order]
    keys = user.astype(np.int64) * 10 + item
    blocked = []
    old, join._BLOCK = join._BLOCK, 4
    old_each, join._each_block = join._each_block, lambda *a: blocked.append(1) or old_each(*a)
    try:
        got = keys.copy()
        join.sort_keys(got, user)
    finally:
        join._BLOCK, join._each_block = old, old_each
    assert got.tolist() == sorted(keys.tolist())
    in_order = not (len(user) > 1 and bool((user[1:] < user[:-1]).any()))
    assert bool(blocked) == (len(user) > 4 and in_order)


@given(st.lists(st.integers(0, 5), max_size=40))
def test_segment_positions_count_within_each_user(codes):
    su = np.sort(np.array(codes, dtype=np.int64))
    expected = [sum(1 for x in su[:i] if x == su[i]) + 1 for i in range(len(su))]
    assert chunk.segment_positions(su).tolist() == expected


def _runs_shuffled(preds: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each user's rows together and in list order, the users in a random order."""
    users = preds["user_id"].drop_duplicates().sample(frac=1.0, random_state=seed)
    place = dict(zip(users, range(len(users)), strict=True))
    ranked = preds.sort_values(["user_id", "score"], ascending=[True, False])
    return ranked.iloc[np.argsort(ranked["user_id"].map(place).to_numpy(), kind="stable")]


@pytest.mark.parametrize("options", [
    {}, {"compat": "trec_eval"}, {"max_depth": 7}, {"judged_only": True},
    {"ties": "optimistic"}, {"dedupe": True}, {"compat": "trec_eval", "relstring": True},
    {"exclude_seen": True},
], ids=str)
@pytest.mark.parametrize("metrics", [METRICS, ["ndcg", "map", "mrr", "precision", "recall"]],
                         ids=["all", "unjudged"])  # the second moves the lists after the cut
def test_users_in_any_order_of_runs_give_the_same_answers(monkeypatch, options, metrics):
    """Lists whose users stand in runs out of user order are moved after the cut
    (``Lists.in_user_order``), or before the stages that need user order: every option that
    reads the lists before the cut gives what the file sorted by user gives."""
    options = dict(options)
    preds, truth = generate(8, 60, 40, 15, 8)
    if options.get("dedupe"):  # repeats, worse-ranked, inside each user's run
        preds = pd.concat([preds, preds.iloc[::9].assign(score=-1.0)], ignore_index=True)
    if options.get("exclude_seen"):
        options = {**options, "train": preds.iloc[::5][["user_id", "item_id"]]}
    if options.pop("relstring", False):  # trec_eval's relstring: one text per user
        metrics = [*metrics, "relstring"]
    monkeypatch.setattr(join, "_BLOCK", 16)  # many blocks, cut between shuffled users
    ordered = _runs_shuffled(preds, seed=None).sort_values(["user_id", "score"],
                                                            ascending=[True, False])
    expected = evaluate(ordered, truth, metrics, KS, **options)
    for seed in (1, 2):
        got = evaluate(_runs_shuffled(preds, seed), truth, metrics, KS, **options)
        _same(expected, got)
        assert expected.relstrings == got.relstrings
    if "relstring" in metrics:
        assert expected.relstrings


def test_users_out_of_order_are_moved_after_the_cut(monkeypatch):
    """The mechanism, not only its answers: lists whose users stand in runs out of user order
    reach the cut as they stand, and only the rows the cut leaves are moved."""
    moved = []
    move = Lists.in_user_order

    def recorded(lists):
        if lists.grouped:
            moved.append((len(lists.su), int(lists.pos.max())))
        return move(lists)

    monkeypatch.setattr(Lists, "in_user_order", recorded)
    preds, truth = generate(8, 60, 40, 15, 8)
    evaluate(_runs_shuffled(preds, seed=3), truth, ["ndcg", "precision"], [3])
    assert len(moved) == 1
    rows, deepest = moved[0]
    assert deepest == 3 and rows <= 3 * preds["user_id"].nunique()
