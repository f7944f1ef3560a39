"""Item statistics for the beyond-accuracy metrics: popularity, the long tail, the catalog,
unit feature vectors and users' profiles, from the extra inputs (``io/extras.py``).

They are computed once over the whole inputs, never per partition of users, so that every
partition scores against the same popularity and the same catalog (SPEC section 7).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import fill_null, to_numpy
from rankeval.io.encode import factorize, pair_keys
from rankeval.io.extras import Extras
from rankeval.io.features import ItemFeatures
from rankeval.io.groups import ItemGroups
from rankeval.io.load import Catalog, Predictions, Train
from rankeval.io.propensities import Propensities
from rankeval.kernels.distinct import distinct, first_index
from rankeval.settings import Settings


@dataclass(frozen=True)
class ItemVectors:
    """Unit-length item vectors by item id (a zero row: an item whose features are all 0),
    for cosine similarity as a dot product."""

    ids: pa.Array
    unit: np.ndarray  # len(ids) x dims

    @classmethod
    def of(cls, features: ItemFeatures) -> ItemVectors:
        (codes,), ids = factorize(features.item)
        if len(ids) < len(codes):
            seen = np.zeros(len(ids), dtype=bool)
            first = np.zeros(len(codes), dtype=bool)
            order = first_index(codes)
            first[order] = True
            seen[codes[order]] = True
            rows = np.flatnonzero(~first)
            raise InputError(features.source.label, "items listed more than once",
                             column=features.columns["item"], count=len(rows),
                             examples=[(int(r) + 1, features.item[int(r)].as_py())
                                       for r in rows[:5]])
        unit = np.zeros((len(ids), features.vectors.shape[1]))
        norm = np.linalg.norm(features.vectors, axis=1)
        nonzero = norm > 0
        unit[codes[nonzero]] = features.vectors[nonzero] / norm[nonzero, None]
        return cls(ids, unit)

    def rows(self, item_ids: pa.Array) -> np.ndarray:
        """Each id's row in ``unit``, -1 for an item without features."""
        idx = pc.index_in(item_ids, value_set=self.ids)
        return to_numpy(fill_null(idx, -1)).astype(np.int64)


@dataclass(frozen=True)
class ItemStats:
    """Per item id (catalog, training and predicted items; byte order): popularity in
    training, whether it is in the long tail, and the catalog it belongs to."""

    ids: pa.Array
    pop: np.ndarray  # distinct training users of the item, or its interactions; 0 if unseen
    tail: np.ndarray  # bool: outside the short head
    n_train_users: int
    catalog_size: int
    fallback: bool  # no --catalog: the catalog is the training items plus the predicted ones
    outside: int  # predicted items missing from --catalog (they join the catalog)
    vectors: ItemVectors | None = None
    member: np.ndarray | None = None  # bool per id: in the catalog
    groups: ItemGroups | None = None  # --item-groups (awrf)
    propensity: Propensities | None = None  # --propensity (the ips_ metrics)

    def at(self, item_ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(popularity, long tail) of each of ``item_ids``."""
        idx = pc.index_in(item_ids, value_set=self.ids)
        where = to_numpy(fill_null(idx, -1)).astype(np.int64)
        known = where >= 0
        pop = np.zeros(len(where))
        pop[known] = self.pop[where[known]]
        tail = np.ones(len(where), dtype=bool)
        tail[known] = self.tail[where[known]]
        return pop, tail


def item_stats(extras: Extras, preds: Predictions, settings: Settings) -> ItemStats | None:
    """Popularity, long tail and catalog, when a metric needs them."""
    if not extras.given():
        return None
    vectors = None if extras.item_features is None else ItemVectors.of(extras.item_features)
    stats = stats_from(item_tally(preds, extras.train, extras.catalog, settings.popularity),
                       settings, vectors)
    return dataclasses.replace(stats, groups=extras.item_groups, propensity=extras.propensity)


@dataclass(frozen=True)
class ItemTally:
    """What item statistics are made of, per item id of any input (byte order): whether it
    was predicted, in training, in the catalog (None: no catalog), its popularity."""

    ids: pa.Array
    predicted: np.ndarray
    trained: np.ndarray
    catalog: np.ndarray | None
    pop: np.ndarray  # distinct training users, or interactions; 0 if not in training
    n_train_users: int


def item_tally(preds: Predictions, train: Train | None, catalog: Catalog | None,
               popularity: str) -> ItemTally:
    columns = [preds.item]
    if train is not None:
        columns.append(train.item)
    if catalog is not None:
        columns.append(catalog.item)
    codes, ids = factorize(*columns)
    n = len(ids)
    predicted, trained = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    predicted[codes[0]] = True
    pop, n_users = np.zeros(n), 0
    if train is not None:
        t_item = codes[1]
        trained[t_item] = True
        (t_user,), users = factorize(train.user)
        n_users = len(users)
        if popularity == "users":  # distinct training users of each item
            keys = distinct(pair_keys(t_item, t_user, max(n_users, 1)))
            pop = np.bincount(keys // max(n_users, 1), minlength=n).astype(np.float64)
        else:
            pop = np.bincount(t_item, weights=train.count, minlength=n).astype(np.float64)
    member = None
    if catalog is not None:
        member = np.zeros(n, dtype=bool)
        member[codes[-1]] = True
    return ItemTally(ids, predicted, trained, member, pop, n_users)


def stats_from(tally: ItemTally, settings, vectors: ItemVectors | None = None) -> ItemStats:
    """Item statistics from a tally (made here, or by a distributed engine): predicted items
    outside the catalog join it; without one, the catalog is every trained or predicted
    item. The catalog's size counts ``catalog_padding`` more (RecBole's padding item)."""
    if tally.catalog is not None:
        outside = int(np.count_nonzero(tally.predicted & ~tally.catalog))
        member = tally.catalog | tally.predicted
    else:
        member, outside = tally.predicted | tally.trained, 0
    tail = (_long_tail(tally.pop, member, settings.tail_share)
            if settings.tail_by == "popularity"
            else _least_popular(tally.pop, tally.trained, settings.tail_share))
    return ItemStats(ids=tally.ids, pop=tally.pop, tail=tail,
                     n_train_users=tally.n_train_users,
                     catalog_size=int(member.sum()) + settings.catalog_padding,
                     fallback=tally.catalog is None, outside=outside, vectors=vectors,
                     member=member)


def feature_arrays(stats: ItemStats, item_ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(unit vector per item code, whether it has features) for a build's items."""
    assert stats.vectors is not None  # called with item features only
    rows = stats.vectors.rows(item_ids)
    has = rows >= 0
    vectors = np.zeros((len(rows), stats.vectors.unit.shape[1]))
    vectors[has] = stats.vectors.unit[rows[has]]
    return vectors, has


def profiles(stats: ItemStats, train: Train, user_ids: pa.Array, compact: np.ndarray,
             n_users: int) -> tuple[np.ndarray, np.ndarray]:
    """Per evaluated user: the sum of the unit vectors of its distinct training items, and
    how many distinct training items it has (items without features count, with no
    similarity, as in Microsoft Recommenders)."""
    assert stats.vectors is not None  # called with item features only
    unit = stats.vectors.unit
    user = to_numpy(fill_null(pc.index_in(train.user, value_set=user_ids), -1)).astype(np.int64)
    known = user >= 0
    user[known] = compact[user[known]]
    known = user >= 0
    item = to_numpy(fill_null(pc.index_in(train.item, value_set=stats.vectors.ids), -1))
    # Distinct (user, item) over every training item, featureless ones as one bucket each.
    (codes,), _ = factorize(train.item)
    key = pair_keys(user[known], codes[known].astype(np.int64), int(codes.max(initial=0)) + 1)
    rows = np.flatnonzero(known)[first_index(key)]
    history = np.bincount(user[rows], minlength=n_users).astype(np.float64)
    profile = np.zeros((n_users, unit.shape[1]))
    with_vector = rows[item[rows] >= 0]
    if len(with_vector):
        order = np.argsort(user[with_vector], kind="stable")
        with_vector = with_vector[order]
        users = user[with_vector]
        starts = np.flatnonzero(np.concatenate([[True], users[1:] != users[:-1]]))
        profile[users[starts]] = np.add.reduceat(unit[item[with_vector]], starts, axis=0)
    return profile, history


def _long_tail(pop: np.ndarray, member: np.ndarray, tail_share: float) -> np.ndarray:
    """Catalog items by popularity descending, then id ascending: the short head is the
    shortest prefix holding at least 1 - tail_share of all popularity; the rest is tail."""
    tail = np.ones(len(pop), dtype=bool)
    total = float(pop[member].sum())
    if total <= 0:
        return tail
    items = np.flatnonzero(member)
    ranked = items[np.lexsort((items, -pop[items]))]
    held = np.cumsum(pop[ranked])
    size = int(np.searchsorted(held, (1.0 - tail_share) * total - 1e-12 * total)) + 1
    tail[ranked[:size]] = False
    return tail


def _least_popular(pop: np.ndarray, trained: np.ndarray, tail_share: float) -> np.ndarray:
    """The items seen in training by popularity ascending, then id ascending: the first
    max(floor(tail_share n), 1) of the n are the tail (RecBole's TailPercentage with
    tail_ratio < 1); items unseen in training are not."""
    tail = np.zeros(len(pop), dtype=bool)
    items = np.flatnonzero(trained)
    if len(items):
        ranked = items[np.lexsort((items, pop[items]))]
        tail[ranked[:max(int(len(items) * tail_share), 1)]] = True
    return tail
