"""What the propensity-weighted metrics read beyond the lists (``kernels/propensity.py``):
each relevant item's weight, the inverse of its chance of being observed (under the
popularity model of Yang et al. 2018, or from ``--propensity FILE``), and each user's sum
of weights over its relevant items."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rankeval.io.encode import pair_keys
from rankeval.kernels.chunk import Chunk
from rankeval.params import FROM_FILE, exponent, kernel_params
from rankeval.settings import Settings

if TYPE_CHECKING:
    from rankeval.build.items import ItemStats
    from rankeval.build.users import Codes, Selection
    from rankeval.io.load import Truth


@dataclass(frozen=True)
class ItemWeights:
    """One weight per item code (the popularity model); 0: an item unseen in training."""

    weight: np.ndarray

    def at(self, user: np.ndarray, item: np.ndarray) -> np.ndarray:
        return self.weight[item]

    def users(self, start: int, stop: int) -> ItemWeights:
        return self


@dataclass(frozen=True)
class PairWeights:
    """One weight per relevant (user, item) pair of the truth (``--propensity FILE``), by
    the pair's key user * n_items + item (users: the chunk's compact indices)."""

    keys: np.ndarray  # sorted
    weight: np.ndarray
    n_items: int

    def at(self, user: np.ndarray, item: np.ndarray) -> np.ndarray:
        """The weight of each pair, every one of them a relevant pair of the truth."""
        at = np.searchsorted(self.keys, pair_keys(user, item, self.n_items))
        return self.weight[at]

    def users(self, start: int, stop: int) -> PairWeights:
        """The pairs of users ``start`` to ``stop``, renumbered from 0 (``Chunk.users``)."""
        a, b = np.searchsorted(self.keys, [start * self.n_items, stop * self.n_items])
        return PairWeights(self.keys[a:b] - start * self.n_items, self.weight[a:b],
                           self.n_items)


def with_propensities(chunk: Chunk, codes: Codes, truth: Truth, sel: Selection, settings: Settings,
                      stats: ItemStats) -> Chunk:
    """Per source of weights the metrics ask for (an exponent of the popularity model, or
    ``FROM_FILE``): the weights, and per evaluated user the sum of its relevant items'
    weights and their number with a weight."""
    user = sel.compact[codes.t_user]
    t = settings.relevance_threshold
    relevant = (user >= 0) & (truth.relevance > 0 if t is None else truth.relevance >= t)
    rows = np.flatnonzero(relevant)
    user, item = user[rows].astype(np.int64), codes.t_item[rows].astype(np.int64)
    out: dict[float | str, tuple[ItemWeights | PairWeights, np.ndarray, np.ndarray]] = {}
    for spec in settings.specs:
        e = exponent(spec.name, kernel_params(spec.params, spec.name))
        if e is None or e in out:
            continue
        if e == FROM_FILE:
            weights: ItemWeights | PairWeights
            weights, w = _from_file(codes, rows, user, item, stats)
        else:
            weights = ItemWeights(_popularity_weights(chunk, stats, float(e)))
            w = weights.weight[item]
        total = np.bincount(user, w, minlength=chunk.n_users)
        count = np.bincount(user, (w > 0).astype(np.float64), minlength=chunk.n_users)
        out[e] = (weights, total, count)
    return dataclasses.replace(chunk, propensity=out)


def _popularity_weights(chunk: Chunk, stats: ItemStats, e: float) -> np.ndarray:
    """Each item code's weight: popularity / the largest popularity of all items, to the
    power -e; 0 for an item unseen in training, which the weighted metrics leave out. The
    largest of all (``stats``), not of this chunk's items: the IPS forms (sn=False) scale
    with it, and a partition of users must not change a user's value."""
    assert chunk.popularity is not None  # gamma= needs --train, which gives popularity
    pop = chunk.popularity.astype(np.float64)
    top = float(np.max(stats.pop, initial=0.0))
    with np.errstate(divide="ignore"):
        return np.where(pop > 0, (pop / (top or 1.0)) ** -e, 0.0)


def _from_file(codes: Codes, rows: np.ndarray, user: np.ndarray, item: np.ndarray,
               stats: ItemStats) -> tuple[PairWeights, np.ndarray]:
    """1 / the file's propensity of each relevant truth row; a row without one is an error."""
    given = stats.propensity
    assert given is not None  # check_needs: an ips_ metric without gamma= needs the file
    p = given.at(codes.user_ids, codes.item_ids, codes.t_user[rows].astype(np.int64), item)
    if np.isnan(p).any():
        raise given.missing(codes.user_ids, codes.item_ids, codes.t_user[rows], item, p)
    w = 1.0 / p
    n_items = max(len(codes.item_ids), 1)
    keys = pair_keys(user, item, n_items)
    order = np.argsort(keys, kind="stable")
    return PairWeights(keys[order], w[order], n_items), w
