"""Popularity bias of a run, for the HTML report and the JSON ``exposure`` block: how the
recommendations at one cut-off spread over the catalog (a Lorenz curve) and how they fall on
items grouped by training popularity, beside how the training interactions fall on them.

Built from the same item counts as the corpus metrics (they add across partitions), and only
when ``--train`` gives a popularity. Small by construction: a fixed number of points whatever
the catalog or user count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.compute as pc

from rankeval.io.arrow import fill_null, to_numpy
from rankeval.kernels.corpus import CORPUS_KERNELS, Lists
from rankeval.settings import Settings

GROUPS = 10  # popularity deciles of the catalog
POINTS = 101  # points of each Lorenz curve


@dataclass(frozen=True)
class Exposure:
    k: int | None  # the cut-off counted (None: @all)
    items: int  # catalog size
    recommended: int  # distinct items in some top-K list
    gini: float  # of the recommendations over the catalog (the corpus metric gini)
    # Lorenz curves at shares 0, 0.01, ..., 1 of the catalog (least exposed first)
    lorenz_recommended: tuple[float, ...]
    lorenz_train: tuple[float, ...]
    # catalog items in GROUPS equal groups by training popularity, most popular first: the
    # share of training interactions and of recommendations that fall on each group
    train_share: tuple[float, ...]
    recommended_share: tuple[float, ...]
    longest: int = 0  # the longest top-K list counted

    @property
    def label(self) -> str:
        """``@20``, saying so when no list reaches K (the charts would otherwise suggest
        20 items were counted per list)."""
        if self.k is None:
            return "@all"
        if self.longest < self.k:
            return f"@{self.k} (no list reaches {self.k}: the longest has {self.longest})"
        return f"@{self.k}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "items": self.items, "recommended_items": self.recommended,
            "gini": self.gini,
            "lorenz": {"catalog_share": [round(i / (POINTS - 1), 2) for i in range(POINTS)],
                       "recommended": list(self.lorenz_recommended),
                       "train": list(self.lorenz_train)},
            "popularity_groups": {"train_share": list(self.train_share),
                                  "recommended_share": list(self.recommended_share)},
        }


def exposure_ks(settings: Settings, stats) -> list[int | None]:
    """The cut-off whose item counts the summary needs: the deepest asked (or @all), when
    training popularity is known; none otherwise."""
    if stats is None or not stats.n_train_users:
        return []
    finite = [s.k for s in settings.specs if s.k is not None]
    return [max(finite) if finite else None]


def exposure(counts, stats, k: int | None) -> Exposure:
    """``counts``: an ``engine.ItemCounts`` at ``k``; ``stats``: ``beyond.ItemStats``."""
    where = to_numpy(fill_null(pc.index_in(counts.ids, value_set=stats.ids), -1))
    rec = np.zeros(len(stats.ids))
    known = where >= 0  # every predicted item is in stats (it joins the catalog)
    rec[where[known]] = counts.counts[known]
    catalog = np.flatnonzero(stats.member)
    pop, rec = stats.pop[catalog], rec[catalog]
    order = np.lexsort((catalog, -pop))  # most popular first, ties in id order
    groups = np.array_split(order, GROUPS) if len(order) >= GROUPS else [order]
    return Exposure(
        k=k, items=len(catalog), recommended=int(np.count_nonzero(rec)),
        gini=CORPUS_KERNELS["gini"](Lists(rec[rec > 0], counts.users, k or counts.longest,
                                          len(catalog))),
        lorenz_recommended=_lorenz(rec), lorenz_train=_lorenz(pop),
        train_share=tuple(_share(pop, g) for g in groups),
        recommended_share=tuple(_share(rec, g) for g in groups),
        longest=counts.longest,
    )


def _share(values: np.ndarray, group: np.ndarray) -> float:
    total = float(values.sum())
    return float(values[group].sum()) / total if total else 0.0


def _lorenz(values: np.ndarray) -> tuple[float, ...]:
    """Cumulative share of the total held by the least-exposed share x of the items, at
    x = 0, 0.01, ..., 1 (linear between items)."""
    n, total = len(values), float(values.sum())
    if not n or not total:
        return tuple(float(x) for x in np.linspace(0, 1, POINTS))
    cum = np.concatenate([[0.0], np.cumsum(np.sort(values))]) / total
    y = np.interp(np.linspace(0, n, POINTS), np.arange(n + 1), cum)
    return tuple(round(float(v), 6) for v in y)
