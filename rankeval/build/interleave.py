"""Interleaved lists, made for every query at once (SPEC §13): team-draft interleaving
(Radlinski et al., CIKM 2008) of two rankers and its generalisation to more, team-draft
multileaving (Schuth et al., CIKM 2014).

In each round the rankers are put in a random order (for two: a coin decides which picks
first), and each in turn adds its highest-ranked item not yet shown, crediting the slot to
its team; a ranker with nothing left to add sits the round out. The list ends at ``k`` slots,
or when no ranker has an item left.

The rankers' lists come as one array ``lists[ranker, query, position]`` of item codes (-1
past a list's end); the rounds and the picks within a round are loops over positions, never
over queries: every step works on all queries' arrays at once.
"""

from __future__ import annotations

import numpy as np

NONE = -1  # no item: past a list's end, or a slot left empty


def team_draft(lists: np.ndarray, k: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """(items, teams): each query's interleaved list of at most ``k`` slots, queries x k,
    and the ranker each slot is credited to (``NONE`` in both past the list's end)."""
    rankers, queries, depth = lists.shape
    rows = np.arange(queries)
    # each (query, item) pair's place in one "shown" mask: an item two rankers both list is
    # one place, so that once shown it is skipped by both
    key = np.where(lists >= 0, rows[None, :, None].astype(np.int64) * (int(lists.max()) + 1)
                   + lists, -1)
    places, inverse = np.unique(key, return_inverse=True)
    place = inverse.reshape(key.shape) - (places[0] == -1)  # -1 where there is no item
    shown = np.zeros(len(places), dtype=bool)
    pointer = np.zeros((rankers, queries), dtype=np.int64)
    items = np.full((queries, k), NONE, dtype=lists.dtype)
    teams = np.full((queries, k), NONE, dtype=np.int16)
    filled = np.zeros(queries, dtype=np.int64)
    while True:
        live = filled < k
        if not live.any():
            break
        order = np.argsort(rng.random((queries, rankers)), axis=1)  # this round's turns
        picked_any = np.zeros(queries, dtype=bool)
        for turn in range(rankers):
            ranker = order[:, turn]
            at = _next_unshown(place, shown, pointer, ranker, rows, depth)
            can = live & (filled < k) & (at < depth)
            q = rows[can]
            r, p = ranker[can], at[can]
            slot = place[r, q, p]
            items[q, filled[can]] = lists[r, q, p]
            teams[q, filled[can]] = r
            shown[slot] = True
            pointer[r, q] = p + 1
            filled[can] += 1
            picked_any |= can
        if not picked_any.any():  # every list of every unfinished query used up
            break
    return items, teams


def _next_unshown(place: np.ndarray, shown: np.ndarray, pointer: np.ndarray,
                  ranker: np.ndarray, rows: np.ndarray, depth: int) -> np.ndarray:
    """Each query's position of ``ranker``'s highest item not yet shown (``depth`` when its
    list has none left), its pointer advanced past shown items, all queries at once."""
    at = pointer[ranker, rows].copy()
    while True:
        inside = at < depth
        here = np.full(len(rows), -1, dtype=np.int64)
        here[inside] = place[ranker[inside], rows[inside], at[inside]]
        at[inside & (here < 0)] = depth  # past the list's end
        skip = inside & (here >= 0) & shown[np.maximum(here, 0)]
        if not skip.any():
            return at
        at[skip] += 1


def balanced(lists: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Balanced interleaving (Joachims 2002) of two rankers, every query at once: a coin per
    query says which ranker leads; with ``ka`` and ``kb`` the positions reached in each list,
    the one behind (the leader when level) offers its next item, added unless already shown.
    Items, queries x k (``NONE`` past the list's end); a ranker whose list has ended leaves
    the rest to the other. No slot belongs to a team: clicks are credited by the items'
    ranks in each list (``analysis.interleaving.balanced_credits``)."""
    rankers, queries, depth = lists.shape
    if rankers != 2:
        raise ValueError("balanced interleaving takes two rankers; more: team-draft "
                         "multileaving")
    rows = np.arange(queries)
    a_first = rng.random(queries) < 0.5
    reached = np.zeros((2, queries), dtype=np.int64)
    ends = (lists >= 0).sum(axis=2)  # each list's length (items come first, then NONE)
    items = np.full((queries, k), NONE, dtype=lists.dtype)
    filled = np.zeros(queries, dtype=np.int64)
    for _ in range(2 * depth):  # each step moves one pointer: at most 2 x depth steps
        live = (filled < k) & ((reached[0] < ends[0]) | (reached[1] < ends[1]))
        if not live.any():
            break
        take_a = (reached[0] < reached[1]) | ((reached[0] == reached[1]) & a_first)
        take_a = np.where(reached[0] >= ends[0], False, np.where(reached[1] >= ends[1], True,
                                                                 take_a))
        r = np.where(take_a, 0, 1)
        q = rows[live]
        offered = lists[r[live], q, reached[r[live], q]]
        already = (items[q] == offered[:, None]).any(axis=1)
        add = q[~already]
        items[add, filled[add]] = offered[~already]
        filled[add] += 1
        reached[r[live], q] += 1
    return items


def probabilistic(lists: np.ndarray, k: int, rng: np.random.Generator, tau: float = 3.0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probabilistic interleaving (Hofmann et al., CIKM 2011), every query at once: each
    ranker's list becomes a softmax over its items, P(d) proportional to 1 / rank(d)^tau; for
    each slot a ranker is drawn uniformly, an item from its softmax over the items not yet
    shown (renormalised), and that item leaves every ranker's softmax. Returns (items, teams,
    chances): queries x k, and for each slot each ranker's chance of having picked its item
    given the slots above it (queries x k x rankers), which credit needs
    (``analysis.interleaving.probabilistic_outcomes``). A ranker with no item left with a
    chance is not drawn; items one ranker lacks have no chance from it."""
    if not tau > 0:
        raise ValueError("tau must be above 0")
    rankers, queries, depth = lists.shape
    rows = np.arange(queries)
    # every query's candidate items (any ranker's), as columns; each ranker's weight of each
    key = np.where(lists >= 0, rows[None, :, None].astype(np.int64) * (int(lists.max()) + 1)
                   + lists, -1)
    flat = key.reshape(rankers, -1)
    places, inverse = np.unique(flat[flat >= 0], return_inverse=True)
    owner = places // (int(lists.max()) + 1)
    width = int(np.bincount(owner, minlength=queries).max()) if len(places) else 0
    column = np.arange(len(places)) - np.searchsorted(owner, owner)
    candidates = np.full((queries, max(width, 1)), NONE, dtype=lists.dtype)
    candidates[owner, column] = places % (int(lists.max()) + 1)
    weight = np.zeros((rankers, queries, max(width, 1)))
    where = np.zeros(flat.shape, dtype=np.int64)
    where[flat >= 0] = column[inverse]
    ranks = np.broadcast_to(np.arange(1, depth + 1, dtype=np.float64), lists.shape).reshape(
        rankers, -1)
    for r in range(rankers):
        has = flat[r] >= 0
        q = np.repeat(rows, depth)[has]
        weight[r, q, where[r][has]] = ranks[r][has] ** -tau
    items = np.full((queries, k), NONE, dtype=lists.dtype)
    teams = np.full((queries, k), NONE, dtype=np.int16)
    chances = np.zeros((queries, k, rankers))
    for slot in range(k):
        mass = weight.sum(axis=2)  # rankers x queries: what each has left
        able = mass > 0
        live = able.any(axis=0)
        if not live.any():
            break
        draw = rng.random(queries) * able.sum(axis=0)  # a ranker among those able
        team = np.argmax(np.cumsum(able, axis=0) > draw[None, :], axis=0)
        q = rows[live]
        # the first item whose cumulated weight passes a uniform share of the total: an item
        # of weight 0 is never it, whatever the rounding
        cumulated = np.cumsum(weight[team[q], q], axis=1)
        column_of = np.argmax(cumulated > rng.random(len(q))[:, None] * cumulated[:, -1:],
                              axis=1)
        items[q, slot] = candidates[q, column_of]
        teams[q, slot] = team[q]
        with np.errstate(invalid="ignore", divide="ignore"):
            chance = weight[:, q, column_of] / mass[:, q]
        chances[q, slot] = np.nan_to_num(chance, nan=0.0).T
        weight[:, q, column_of] = 0.0
    return items, teams, chances
