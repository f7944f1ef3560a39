"""Stochastic runs: several sampled rankings per user (a ``sample`` column; a TREC run's second
field), as expected-exposure evaluation (SPEC section 11) reads them.

Each (user, sample) is evaluated as a user of its own, against the user's whole truth
(``expand``); the per-user values are then each user's mean over its samples, with their
standard deviation beside them (``collapse``). Users count once whatever their number of
samples. The expected-exposure metrics read the samples together (``Chunk.sampled_user``):
their value is one per user, the same on each of its samples.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.encode import factorize
from rankeval.io.load import Predictions, Truth
from rankeval.kernels.chunk import Chunk
from rankeval.kernels.distinct import present
from rankeval.settings import Settings

# Between a user's id and its sample's in a composite id: it sorts before every other byte,
# so composites sort by user first, as the users' own ids do.
JOIN = "\x00"


@dataclass(frozen=True)
class Sampled:
    """How the composite users of ``expand`` map back to the users."""

    user_ids: pa.Array  # every user's id, by code (byte order)
    composite_ids: pa.Array  # every composite's id, by composite (byte order)
    composite_user: np.ndarray  # composite -> user code
    composite_sample: np.ndarray  # composite -> sample code + 1 (0: a user with no ranking)
    in_truth: int
    in_predictions: int
    only_in_predictions: int
    without_relevant: int


def expand(preds: Predictions, truth: Truth, settings: Settings
           ) -> tuple[Predictions, Truth, Sampled]:
    """Predictions keyed by (user, sample) and the truth repeated for each sample of its
    user; a truth user without predictions keeps one composite (no sample), which the build
    counts as a user without predictions."""
    assert preds.sample is not None
    (t_user, p_user), user_ids = factorize(truth.user, preds.user)
    (p_sample,), sample_ids = factorize(preds.sample)
    base = np.int64(len(sample_ids) + 1)  # sample code + 1; 0: no sample
    n_users = len(user_ids)
    keys = p_user.astype(np.int64) * base + p_sample + 1
    in_truth, in_preds = present(t_user, n_users), present(p_user, n_users)
    lone = np.flatnonzero(in_truth & ~in_preds).astype(np.int64) * base
    composite, row_composite = np.unique(keys, return_inverse=True)
    every = np.sort(np.concatenate([composite, lone]))
    row_composite = np.searchsorted(every, composite)[row_composite]
    comp_user, comp_sample = every // base, every % base
    samples_text = pa.concat_arrays([pa.array([""], pa.string()),
                                     sample_ids.cast(pa.string())])
    # pyarrow-stubs take all scalars or all arrays here; pyarrow joins arrays by a scalar
    composite_ids = pc.binary_join_element_wise(  # type: ignore[call-overload]
        user_ids.cast(pa.string()).take(from_numpy(comp_user)),
        samples_text.take(from_numpy(comp_sample)), JOIN)
    # the truth: each row once per composite of its user, composites in order
    per_user = np.bincount(comp_user, minlength=n_users)
    first = np.cumsum(per_user) - per_user  # (also for no users: a chunk without truth)
    copies = per_user[t_user]
    rows = np.repeat(np.arange(len(t_user)), copies)
    start = np.cumsum(copies) - copies
    nth = np.arange(len(rows)) - np.repeat(start, copies)
    truth_composite = first[t_user[rows]] + nth
    aspects = truth.aspects
    if aspects is not None:  # subtopic rows follow their truth rows' copies
        a_rows = np.repeat(aspects.row, copies[aspects.row])
        a_start = np.cumsum(copies[aspects.row]) - copies[aspects.row]
        a_nth = np.arange(len(a_rows)) - np.repeat(a_start, copies[aspects.row])
        keep = np.repeat(np.arange(len(aspects.row)), copies[aspects.row])
        aspects = dataclasses.replace(aspects, row=start[a_rows] + a_nth,
                                      subtopic=aspects.subtopic[keep],
                                      relevance=aspects.relevance[keep])
    t = settings.relevance_threshold
    relevant = truth.relevance > 0 if t is None else truth.relevance >= t
    has_relevant = np.zeros(n_users, dtype=bool)
    has_relevant[t_user[relevant]] = True
    sampled = Sampled(
        user_ids=user_ids, composite_ids=composite_ids, composite_user=comp_user,
        composite_sample=comp_sample,
        in_truth=int(in_truth.sum()), in_predictions=int(in_preds.sum()),
        only_in_predictions=int((in_preds & ~in_truth).sum()),
        without_relevant=int((in_truth & ~has_relevant).sum()))
    new_preds = dataclasses.replace(
        preds, user=pa.chunked_array([composite_ids.take(from_numpy(row_composite))]),
        sample=None)
    new_truth = dataclasses.replace(
        truth, user=pa.chunked_array([composite_ids.take(from_numpy(truth_composite))]),
        item=truth.item.take(from_numpy(rows)), relevance=truth.relevance[rows],
        aspects=aspects)
    return new_preds, new_truth, sampled


@dataclass(frozen=True)
class Groups:
    """The evaluated composites grouped by user: ``users`` (codes), each group's ``start``
    among the composites and ``size``; ``rankings``: its sampled rankings (0 for a user
    without predictions, whose one composite has none)."""

    users: np.ndarray
    start: np.ndarray
    size: np.ndarray
    rankings: np.ndarray

    def user_of(self, codes: np.ndarray) -> np.ndarray:
        """The user (0.., in the order of ``users``) of composite codes."""
        return np.searchsorted(self.start, codes, side="right") - 1

    def mark(self, chunk: Chunk) -> Chunk:
        """The chunk with its sampled users marked, for the expected-exposure kernels."""
        sampled_user = np.repeat(np.arange(len(self.users)), self.size)
        return dataclasses.replace(chunk, sampled_user=sampled_user,
                                   samples=np.repeat(self.size, self.size))

    def mean(self, values: np.ndarray) -> np.ndarray:
        """Each user's mean over its samples with a value (NaN: none has one)."""
        defined = ~np.isnan(values)
        total = np.add.reduceat(np.where(defined, values, 0.0), self.start)
        n = np.add.reduceat(defined.astype(np.int64), self.start)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, total / np.maximum(n, 1), np.nan)

    def sd(self, values: np.ndarray) -> np.ndarray:
        """Each user's population standard deviation over its samples with a value."""
        mean = np.repeat(self.mean(values), self.size)
        square = np.where(np.isnan(values), np.nan, (values - mean) ** 2)
        return np.sqrt(self.mean(square))


def groups(sampled: Sampled, evaluated: pa.Array) -> Groups:
    """The groups of the evaluated composites (ids in byte order, as a build gives them)."""
    at = to_numpy(pc.index_in(evaluated.cast(pa.string()), value_set=sampled.composite_ids))
    at = at.astype(np.int64)
    user = sampled.composite_user[at]
    users, start, size = np.unique(user, return_index=True, return_counts=True)
    ranked = (sampled.composite_sample[at] > 0).astype(np.int64)
    rankings = np.add.reduceat(ranked, start) if len(start) else ranked
    return Groups(users, start, size, rankings)
