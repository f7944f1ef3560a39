"""What one partition of users contributes (``Partial``: per-user values, exact sums, integer
counts, counted notices, item counts, a stochastic run's totals), and ``merge``: partials of
disjoint partitions combined into exactly what evaluating everything at once gives."""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.users import UserCounts
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.io.encode import Ids
from rankeval.io.zscores import ZScored
from rankeval.kernels.aggregate import exact_parts
from rankeval.kernels.distinct import count_distinct
from rankeval.kernels.fairness import GroupTotals
from rankeval.names import MetricSpec
from rankeval.notices import Notice
from rankeval.notices import merge as merge_notices
from rankeval.registry import CORPUS, REGISTRY
from rankeval.settings import Settings


@dataclass(frozen=True)
class Partial:
    """What one partition of users contributes; partials of disjoint partitions merge."""

    users: pa.Array  # evaluated user ids, sorted as byte strings
    values: dict[MetricSpec, np.ndarray]  # per-user values, in the order of ``users``
    sums: dict[MetricSpec, tuple[float, ...]]  # exact parts of each metric's sum
    counts: UserCounts
    notices: list[Notice]
    rows_beyond_k: int
    # Users with tied scores within the scored depth, and the exact parts of each metric's
    # sum under the pessimistic and the optimistic order of their ties (empty without ties).
    tied_users: int = 0
    tie_bounds: dict[MetricSpec, tuple[tuple[float, ...], tuple[float, ...]]] = (
        dataclasses.field(default_factory=dict))
    # For corpus metrics, per cut-off (None: the whole list): the ids of the items in any
    # top-K list with their counts, the users with a non-empty top K, the longest list.
    item_counts: dict[int | None, ItemCounts] = dataclasses.field(default_factory=dict)
    # Metrics that cannot score every user (ild): how many users they scored.
    scored: dict[MetricSpec, int] = dataclasses.field(default_factory=dict)
    # The longest list scored (positions past the deepest K are not kept, so at most about
    # that K): a K past it is a K no list reaches.
    longest: int = 0
    # A stochastic run (``build/samples.py``): each user's number of sampled rankings and,
    # per metric, the standard deviation of its values over them (``values`` are the means).
    samples: np.ndarray | None = None
    spread: dict[MetricSpec, np.ndarray] = dataclasses.field(default_factory=dict)
    sample_totals: SampleTotals | None = None  # what the report says of them; they add up
    # per awrf metric, the run's exposure by item group against its target (they add up)
    group_exposure: dict[MetricSpec, GroupTotals] = dataclasses.field(default_factory=dict)
    # trec_eval's relstring per user, in the order of ``users``, when asked for
    relstrings: pa.Array | None = None
    # what ordered the lists (build.ordering.ordered_by): rank, score or input; "": unknown
    ordered_by: str = ""
    # the values as z-scores (``engines.zscores``): where each is undefined, and trec_eval's
    # summary of them; None without ``zscores``
    zscores: ZScored | None = None


@dataclass(frozen=True)
class ItemCounts:
    ids: pa.Array
    counts: np.ndarray
    users: int
    longest: int

    def __add__(self, other: ItemCounts) -> ItemCounts:
        return ItemCounts.combine([self, other])

    @staticmethod
    def combine(parts: Sequence[ItemCounts]) -> ItemCounts:
        """The counts of disjoint partitions of users, in one sort (not one per pair: a
        cluster sends hundreds of partials of millions of items)."""
        ids = pa.concat_arrays([p.ids.cast(pa.string()) for p in parts])
        counts = np.concatenate([p.counts for p in parts])
        order = to_numpy(pc.sort_indices(ids))
        ids, counts = ids.take(from_numpy(order)), counts[order]
        same = to_numpy(fill_null(pc.equal(ids.slice(1), ids.slice(0, len(ids) - 1)), False))
        starts = np.flatnonzero(np.concatenate([[True], ~same])) if len(ids) else np.zeros(0, int)
        return ItemCounts(ids.take(from_numpy(starts)), np.add.reduceat(counts, starts)
                          if len(starts) else counts, sum(p.users for p in parts),
                          max(p.longest for p in parts))


def item_counts(chunk, items: Ids, settings: Settings, also=()
                ) -> dict[int | None, ItemCounts]:
    """Per cut-off of a corpus metric (and of ``also``): how many top-K lists hold each
    item (``items``: the ids of the chunk's item codes, whose text only this asks for)."""
    out = {}
    for k in {s.k for s in settings.specs if REGISTRY[s.name].scope == CORPUS} | set(also):
        rows = np.flatnonzero(chunk.pos <= k) if k is not None else slice(None)
        counts = np.bincount(chunk.item[rows], minlength=len(items))
        present = np.flatnonzero(counts)
        users = count_distinct(chunk.user[rows])
        longest = int(np.bincount(chunk.user[rows]).max(initial=0)) if users else 0
        out[k] = ItemCounts(items.text.take(from_numpy(present)), counts[present], users,
                            longest)
    return out


@dataclass(frozen=True)
class SampleTotals:
    """A stochastic run's sampled rankings and spreads as sums that add up over partitions:
    the rankings, the fewest and most of one user, and per metric the exact parts of the sum
    of the users' standard deviations with how many users have one."""

    rankings: int
    fewest: int
    most: int
    spread: dict[MetricSpec, tuple[tuple[float, ...], int]]

    def __add__(self, other: SampleTotals) -> SampleTotals:
        return SampleTotals(
            self.rankings + other.rankings, min(self.fewest, other.fewest),
            max(self.most, other.most),
            {s: (parts + other.spread[s][0], n + other.spread[s][1])
             for s, (parts, n) in self.spread.items()})

    @staticmethod
    def of(rankings: np.ndarray, spread: dict[MetricSpec, np.ndarray]) -> SampleTotals:
        defined = {s: v[~np.isnan(v)] for s, v in spread.items()}
        return SampleTotals(int(rankings.sum()), int(rankings.min(initial=2**62)),
                            int(rankings.max(initial=0)),
                            {s: (exact_parts(v), len(v)) for s, v in defined.items()})


def merge(partials: Sequence[Partial]) -> Partial:
    """One partial for the union of disjoint partitions: per-user rows in id order, parts
    concatenated (so sums stay exact), counts and notice counts added."""
    if len(partials) == 1:
        return partials[0]
    users = pa.concat_arrays([p.users.cast(pa.string()) for p in partials])
    order = to_numpy(pc.sort_indices(users))
    specs = list(partials[0].values)
    counts = partials[0].counts
    for p in partials[1:]:
        counts = counts + p.counts
    return Partial(
        users=users.take(from_numpy(order)),
        values={s: np.concatenate([p.values[s] for p in partials])[order] for s in specs},
        sums={s: tuple(x for p in partials for x in p.sums[s]) for s in specs},
        counts=counts,
        notices=merge_notices(p.notices for p in partials),
        rows_beyond_k=sum(p.rows_beyond_k for p in partials),
        tied_users=sum(p.tied_users for p in partials),
        tie_bounds=_merged_bounds(partials),
        item_counts={k: ItemCounts.combine([p.item_counts[k] for p in partials])
                     for k in partials[0].item_counts},
        scored={s: sum(p.scored[s] for p in partials) for s in partials[0].scored},
        longest=max(p.longest for p in partials),
        samples=None if partials[0].samples is None else np.concatenate(
            [p.samples for p in partials if p.samples is not None])[order],
        spread={s: np.concatenate([p.spread[s] for p in partials])[order]
                for s in partials[0].spread},
        sample_totals=added([p.sample_totals for p in partials]),
        group_exposure={s: functools.reduce(operator.add, [p.group_exposure[s]
                                                          for p in partials])
                        for s in partials[0].group_exposure},
        relstrings=None if partials[0].relstrings is None else pa.concat_arrays(
            [p.relstrings for p in partials if p.relstrings is not None]).take(
                from_numpy(order)),
        ordered_by=partials[0].ordered_by,  # one file, one order
    )


def _merged_bounds(partials: Sequence[Partial]):
    """Tie bounds of the union: a partition without ties adds its own sums to both sides."""
    tied = next((p.tie_bounds for p in partials if p.tie_bounds), None)
    if tied is None:
        return {}
    return {s: tuple(tuple(x for p in partials
                           for x in (p.tie_bounds[s][side] if p.tie_bounds else p.sums[s]))
                     for side in (0, 1))
            for s in tied}


def added(totals: list[SampleTotals | None]) -> SampleTotals | None:
    """The sample totals of a union (a deterministic partition adds none)."""
    present = [t for t in totals if t is not None]
    if not present:
        return None
    out = present[0]
    for t in present[1:]:
        out = out + t
    return out
