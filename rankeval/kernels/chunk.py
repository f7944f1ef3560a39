"""The kernel contract: the ranked lists and ideal lists of complete users, as flat numpy arrays.

This module and ``metrics.py`` import numpy and nothing heavier, so kernels can run wherever
numpy does (a Spark worker, a notebook) without the readers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Chunk:
    """The top-K lists and ideal lists of ``n_users`` complete users, as flat arrays.

    Rows are sorted by (user, pos); ``user`` holds codes 0..n_users-1 and ``pos`` is 1-based.
    Any subset of complete users is itself a valid chunk (``users``), so the kernels can run
    partition by partition.
    """

    n_users: int
    user: np.ndarray  # int32 codes of the ranked rows
    pos: np.ndarray  # 1 = best
    item: np.ndarray  # int32 item codes (shared by every chunk of one evaluation)
    rel: np.ndarray  # float64, 0 where the item is not in the truth
    ideal_user: np.ndarray  # truth rows sorted by relevance descending within user
    ideal_pos: np.ndarray
    ideal_rel: np.ndarray
    n_relevant: np.ndarray  # R: relevant truth items per user
    max_relevance: np.ndarray  # highest truth relevance per user (-inf: none positive)
    # Only when a metric reads judgements (bpref, judged@K, rbp_residual): whether each row's
    # item is judged (in the truth with relevance >= 0; trec_eval reads a negative relevance
    # as "in the pool, not judged"), and each user's judged non-relevant items in the truth.
    judged: np.ndarray | None = None
    n_nonrelevant: np.ndarray | None = None
    # With ``judged``: whether each row's item is in the truth at all (infAP's pool)
    pooled: np.ndarray | None = None
    # When tied scores exist: the pos of the first row of each row's tie group (rows of equal
    # score in a user's list), else None. A group straddling the deepest K is kept whole.
    tie_start: np.ndarray | None = None
    # Per user, whether its list was emptied by the exclusions (seen items, -J): it has
    # predictions but retrieved nothing (None: no user's was). Users without predictions
    # have no list to empty.
    emptied: np.ndarray | None = None
    # With --train: per item code, its training popularity and whether it is in the long
    # tail; the number of training users and the total popularity (novelty). Shared by every
    # partition.
    popularity: np.ndarray | None = None
    long_tail: np.ndarray | None = None
    n_train_users: int = 0
    popularity_total: float = 0.0  # the popularity of every training item added up
    # With --item-features: per item code, its unit feature vector (a zero row without
    # features) and whether it has one; per user, the sum of the unit vectors of its training
    # items and how many distinct training items it has (serendipity).
    vectors: np.ndarray | None = None
    has_vector: np.ndarray | None = None
    profile: np.ndarray | None = None
    history: np.ndarray | None = None
    # With subtopic judgements (the intent-aware metrics): the relevant (user, item, subtopic)
    # triples sorted by (user, item), subtopics numbered 0.. in user order; per subtopic its
    # relevant items; per user its subtopics with a relevant item (M).
    aspect_user: np.ndarray | None = None
    aspect_item: np.ndarray | None = None
    aspect_sub: np.ndarray | None = None
    aspect_size: np.ndarray | None = None
    n_aspects: np.ndarray | None = None
    # With the expected-exposure metrics: every judged grade of each user as levels (the
    # user's truth rows of one grade, sorted by grade descending; ``level_start``: rows of
    # higher grades above them), and each row's level (-1: not in the truth).
    level_user: np.ndarray | None = None
    level_start: np.ndarray | None = None
    level_size: np.ndarray | None = None
    row_level: np.ndarray | None = None
    # A stochastic run (``build/samples.py``): each user code is one sampled ranking;
    # ``sampled_user`` numbers the users they belong to (0.., contiguous) and ``samples``
    # counts each one's sampled rankings (per user code).
    sampled_user: np.ndarray | None = None
    samples: np.ndarray | None = None
    # With --item-groups (awrf): per group column, the items' memberships and each user's
    # target (``kernels/fairness.ChunkGroups``)
    groups: dict[str, Any] | None = None
    # With the propensity-weighted metrics (``kernels/propensity.py``): per source of weights
    # (an exponent e of the popularity model, or ``params.FROM_FILE``), the relevant items'
    # weights (``build/propensity.py``: ItemWeights, PairWeights) and per user the sum of
    # its relevant items' weights and how many have one
    propensity: dict[float | str, tuple[Any, np.ndarray, np.ndarray]] | None = None

    def users(self, start: int, stop: int) -> Chunk:
        """The sub-chunk of users ``start <= code < stop``, renumbered from 0 (a partition)."""
        a, b = np.searchsorted(self.user, [start, stop])
        c, d = np.searchsorted(self.ideal_user, [start, stop])
        return Chunk(
            n_users=stop - start,
            user=self.user[a:b] - start,
            pos=self.pos[a:b],
            item=self.item[a:b],
            rel=self.rel[a:b],
            ideal_user=self.ideal_user[c:d] - start,
            ideal_pos=self.ideal_pos[c:d],
            ideal_rel=self.ideal_rel[c:d],
            n_relevant=self.n_relevant[start:stop],
            max_relevance=self.max_relevance[start:stop],
            judged=None if self.judged is None else self.judged[a:b],
            n_nonrelevant=None if self.n_nonrelevant is None else self.n_nonrelevant[start:stop],
            pooled=None if self.pooled is None else self.pooled[a:b],
            tie_start=None if self.tie_start is None else self.tie_start[a:b],
            emptied=None if self.emptied is None else self.emptied[start:stop],
            popularity=self.popularity,
            long_tail=self.long_tail,
            n_train_users=self.n_train_users,
            popularity_total=self.popularity_total,
            vectors=self.vectors,
            has_vector=self.has_vector,
            profile=None if self.profile is None else self.profile[start:stop],
            history=None if self.history is None else self.history[start:stop],
            **self._aspects(start, stop),
            **self._grades(a, b, start, stop),
        )

    def _grades(self, a: int, b: int, start: int, stop: int) -> dict:
        """The grade levels and samples of the users ``start <= code < stop`` (rows a..b),
        renumbered from 0; a sampled user's rankings must all fall inside."""
        out: dict = {}
        if self.level_user is not None:
            assert self.level_start is not None and self.level_size is not None
            assert self.row_level is not None
            e, f = np.searchsorted(self.level_user, [start, stop])
            level = self.row_level[a:b]
            out.update(level_user=self.level_user[e:f] - start,
                       level_start=self.level_start[e:f], level_size=self.level_size[e:f],
                       row_level=np.where(level >= 0, level - e, -1))
        if self.groups is not None:
            out["groups"] = {name: replace(g, relevant=g.relevant[start:stop])
                             for name, g in self.groups.items()}
        if self.propensity is not None:
            out["propensity"] = {e: (w.users(start, stop), total[start:stop], count[start:stop])
                                 for e, (w, total, count) in self.propensity.items()}
        if self.sampled_user is not None and stop > start:
            assert self.samples is not None
            out.update(sampled_user=self.sampled_user[start:stop] - self.sampled_user[start],
                       samples=self.samples[start:stop])
        return out

    def _aspects(self, start: int, stop: int) -> dict:
        """The subtopic arrays of the users ``start <= code < stop``, renumbered from 0."""
        if self.aspect_user is None:
            return {}
        assert self.n_aspects is not None and self.aspect_sub is not None
        assert self.aspect_size is not None and self.aspect_item is not None
        e, f = np.searchsorted(self.aspect_user, [start, stop])
        first = int(self.n_aspects[:start].sum())
        last = first + int(self.n_aspects[start:stop].sum())
        return {"aspect_user": self.aspect_user[e:f] - start, "aspect_item": self.aspect_item[e:f],
                "aspect_sub": self.aspect_sub[e:f] - first,
                "aspect_size": self.aspect_size[first:last],
                "n_aspects": self.n_aspects[start:stop]}

    def reordered(self, best_first: bool) -> Chunk:
        """The chunk with each tie group's rows ordered by relevance, descending (the
        optimistic order) or ascending (pessimistic); positions stay, items move. Only the
        rows of groups of two or more are sorted (ties are usually few: trec_eval's 5M-row
        runs, 4 s -> 0.1 s); the others keep their place, as a sort of every row keeps it."""
        if self.tie_start is None:
            return self
        later = self.pos != self.tie_start  # a row after the first of its group
        if not later.any():
            return self
        grouped = later.copy()
        grouped[:-1] |= later[1:]  # and the first row of each group: the one before
        rows = np.flatnonzero(grouped)
        rel = self.rel[rows]
        within = np.lexsort((-rel if best_first else rel, self.tie_start[rows],
                             self.user[rows]))
        order = np.arange(len(self.user))
        order[rows] = rows[within]
        return replace(self, item=self.item[order], rel=self.rel[order],
                       judged=None if self.judged is None else self.judged[order],
                       pooled=None if self.pooled is None else self.pooled[order],
                       row_level=None if self.row_level is None else self.row_level[order])

    def only(self, users: np.ndarray) -> Chunk | None:
        """The sub-chunk of the given users (sorted distinct codes), renumbered 0..len-1 in
        their order; None when the chunk holds per-user tables this selection does not carry
        (subtopics, grade levels, item groups, propensities, samples: ``users`` takes those
        by a range of codes only)."""
        if any(getattr(self, name) is not None for name in _RANGE_ONLY):
            return None
        keep = np.zeros(self.n_users, dtype=bool)
        keep[users] = True
        code = np.cumsum(keep, dtype=np.int32) - 1
        rows, ideal = keep[self.user], keep[self.ideal_user]

        def per_user(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[users]

        def per_row(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[rows]

        return replace(
            self, n_users=len(users), user=code[self.user[rows]], pos=self.pos[rows],
            item=self.item[rows], rel=self.rel[rows], ideal_user=code[self.ideal_user[ideal]],
            ideal_pos=self.ideal_pos[ideal], ideal_rel=self.ideal_rel[ideal],
            n_relevant=self.n_relevant[users], max_relevance=self.max_relevance[users],
            judged=per_row(self.judged), n_nonrelevant=per_user(self.n_nonrelevant),
            pooled=per_row(self.pooled), tie_start=per_row(self.tie_start),
            emptied=per_user(self.emptied), profile=per_user(self.profile),
            history=per_user(self.history))


# Per-user tables that ``Chunk.users`` takes by a range of codes and ``Chunk.only`` does not
_RANGE_ONLY = ("aspect_user", "level_user", "groups", "propensity", "sampled_user")


def count_before(sorted_user: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """For each row, how many earlier rows of the same user have ``flags`` set (or the sum
    of their counts, for whole-number counts)."""
    n = len(sorted_user)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    running = np.cumsum(flags, dtype=np.int64 if flags.dtype == bool else None)
    running -= flags
    start = np.zeros(n, dtype=np.int64)  # each row's user's first row
    first = np.flatnonzero(sorted_user[1:] != sorted_user[:-1]) + 1
    start[first] = first
    np.maximum.accumulate(start, out=start)
    return running - running[start]


def count_before_at(sorted_user: np.ndarray, flags: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``count_before(sorted_user, flags)[rows]`` with one running count of the chunk's size
    in place of three (a 5M-row chunk: 40 MB at a time, not 120)."""
    running = np.cumsum(flags, dtype=np.int64)
    first = np.searchsorted(sorted_user, sorted_user[rows])  # each row's user's first row
    return (running[rows] - flags[rows]) - (running[first] - flags[first])


def within_group_product(offset: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Per row, the product of ``factor`` over its group's rows up to itself, where
    ``offset`` is the 1-based place of each row in its group (groups contiguous).

    Multiplied in row order, one offset at a time over all groups: a loop over the depth of
    the largest group, not over groups."""
    return _within_group(offset, factor, np.multiply)


def within_group_sum(offset: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row, the sum of ``values`` over its group's rows up to itself, added in row order
    as a walk down each list adds them: exact to the last bit whatever the other groups hold
    (a global cumsum minus its value at the group's start is not, for floats)."""
    return _within_group(offset, values, np.add)


def _within_group(offset: np.ndarray, values: np.ndarray, op: np.ufunc) -> np.ndarray:
    out = values.astype(np.float64, copy=True)
    if not len(out):
        return out
    order = np.argsort(offset, kind="stable")
    bounds = np.searchsorted(offset[order], np.arange(2, int(offset.max()) + 2))
    for a, b in itertools.pairwise(bounds):
        rows = order[a:b]
        out[rows] = op(out[rows], out[rows - 1])
    return out


def segment_positions(sorted_user: np.ndarray) -> np.ndarray:
    """1-based position of each row within its run of equal user codes (codes sorted, >= 0)."""
    n = len(sorted_user)
    dtype = np.int32 if n < 2**31 else np.int64  # half the memory of every later pass
    if n == 0:
        return np.zeros(0, dtype=dtype)
    # A running sum of ones that drops back to 1 at the first row of each user.
    starts = np.flatnonzero(sorted_user[1:] != sorted_user[:-1]) + 1
    steps = np.ones(n, dtype=dtype)
    steps[starts] = 1 - np.diff(starts, prepend=0)
    return np.cumsum(steps, out=steps)
