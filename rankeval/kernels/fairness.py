"""Group fairness of the ranked lists: attention-weighted rank fairness (AWRF; Sapiezynski et
al. 2019, as the TREC Fair Ranking track 2021-22 computes it).

The item at rank i (to K) draws attention 1 / log2(max(i, 2)) (ranks 1 and 2 alike, as TREC's
``discount``). A list's group distribution is the attention-weighted mean of its items' group
memberships (an item in k groups counts 1/k in each; an item the groups file does not name is
in the group ``(none)``); its target is the mean membership of the user's relevant items
(``target='relevant'``, TREC 2022 without its background) or the groups' share of the items
the file names (``target='catalog'``). AWRF = 1 - JSD(list, target), the Jensen-Shannon
divergence in natural logarithms (scipy's default, as TREC's), so it lies in [1 - ln 2, 1].
``background=`` mixes a background distribution into the target as TREC 2022 does: the
named groups' share of the target, f, is spread ``(1 - mix)`` as the target and ``mix``
(default 0.5) as the background; ``(none)`` keeps its own.

``exposure_ratio`` is, per user, the worst-exposed group's exposure-to-target ratio over the
best-exposed one's, among the groups with a target: 1 when every group gets attention in
proportion to its target, 0 when one of them gets none (the reciprocal of the best / worst
ratio, so that it is bounded and averages).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankeval.kernels.sums import Sums
from rankeval.params import target_shares


@dataclass(frozen=True)
class ChunkGroups:
    """One group column over the chunk's item codes: CSR memberships (``ptr`` into ``group``
    and ``share``), per user the target distribution of its relevant items, and the groups'
    share of the catalog."""

    names: list[str]
    ptr: np.ndarray
    group: np.ndarray
    share: np.ndarray
    relevant: np.ndarray  # users x groups, each row summing to 1 (0: no relevant item)
    catalog: np.ndarray  # groups

    def expand(self, item: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, group, share) of every membership of the rows' ``item`` codes."""
        start, count = self.ptr[item], self.ptr[item + 1] - self.ptr[item]
        row = np.repeat(np.arange(len(item)), count)
        first = np.repeat(np.cumsum(count) - count, count)
        at = np.repeat(start, count) + (np.arange(len(row)) - first)
        return row, self.group[at], self.share[at]


def jensen_shannon(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """JSD of the rows of p and q (distributions), natural log; 0 log 0 = 0."""
    m = (p + q) / 2.0

    def kl(a: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * np.log(a / m), 0.0)
        return terms.sum(axis=1)

    return 0.5 * kl(p) + 0.5 * kl(q)


def list_distribution(c, groups: ChunkGroups, k: float) -> np.ndarray:
    """Each user's attention-weighted group distribution over its top K (NaN: empty list)."""
    rows = np.flatnonzero(c.pos <= k)
    attention = 1.0 / np.log2(np.maximum(c.pos[rows], 2).astype(np.float64))
    row, group, share = groups.expand(c.item[rows].astype(np.int64))
    n_groups = len(groups.names)
    key = c.user[rows][row].astype(np.int64) * n_groups + group
    total = np.bincount(key, attention[row] * share, minlength=c.n_users * n_groups)
    total = total.reshape(c.n_users, n_groups)
    mass = total.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / mass[:, None]


def distributions(c, params: dict, k: float) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(group names, each user's list distribution, its target) for awrf's parameters."""
    assert c.groups is not None  # built when a metric reads item groups
    by = params.get("by")
    groups = c.groups[str(by)] if by is not None else next(iter(c.groups.values()))
    ranked = list_distribution(c, groups, k)
    target = np.broadcast_to(_shares(groups, str(params.get("target", "relevant"))),
                             ranked.shape)
    background = params.get("background")
    if background is not None:
        bg = _shares(groups, str(background))[:-1]  # (none), last, has no background share
        mix = float(params.get("mix", 0.5))
        named = target[:, :-1]
        target = np.column_stack([(1.0 - mix) * named + mix * named.sum(axis=1)[:, None]
                                  * (bg / bg.sum()), target[:, -1]])
    return groups.names, ranked, target


def _shares(groups: ChunkGroups, kind: str) -> np.ndarray:
    """The distribution ``kind`` names: 'relevant' (per user), 'catalog', or given shares."""
    if kind == "relevant":
        return groups.relevant
    if kind == "catalog":
        return groups.catalog
    shares = target_shares(kind) or {}
    given = np.array([shares.get(name, 0.0) for name in groups.names])
    return given / given.sum()


@dataclass(frozen=True)
class GroupTotals:
    """A run's exposure by group for one awrf: the sums over users with a list of their
    list's group distribution and of their target; they add up over partitions."""

    names: list[str]
    exposure: np.ndarray
    target: np.ndarray
    users: int

    def __add__(self, other: GroupTotals) -> GroupTotals:
        return GroupTotals(self.names, self.exposure + other.exposure,
                           self.target + other.target, self.users + other.users)

    @staticmethod
    def of(names: list[str], ranked: np.ndarray, target: np.ndarray) -> GroupTotals:
        listed = ~np.isnan(ranked).any(axis=1) & (target.sum(axis=1) > 0)
        return GroupTotals(names, ranked[listed].sum(axis=0), target[listed].sum(axis=0),
                           int(listed.sum()))

    def rows(self) -> list[tuple[str, float, float, float]]:
        """(group, exposure share, target share, exposure / target) by group; the shares
        are the means over users."""
        n = max(self.users, 1)
        out = []
        for g, e, t in zip(self.names, self.exposure / n, self.target / n, strict=True):
            out.append((g, float(e), float(t), float(e / t) if t > 0 else float("nan")))
        return out


def _awrf(s: Sums, k: float) -> np.ndarray:
    _, ranked, target = distributions(s.c, s.params, k)
    value = 1.0 - jensen_shannon(ranked, target)
    empty = np.isnan(ranked).any(axis=1) | (target.sum(axis=1) == 0)
    return np.where(empty, np.nan, value)


def _exposure_ratio(s: Sums, k: float) -> np.ndarray:
    _, ranked, target = distributions(s.c, s.params, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ranked / target
    has = target > 0
    worst = np.where(has, ratio, np.inf).min(axis=1)
    best = np.where(has, ratio, -np.inf).max(axis=1)
    undefined = np.isnan(ranked).any(axis=1) | (has.sum(axis=1) < 2) | ~(best > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(undefined, np.nan, worst / best)


KERNELS = {"awrf": _awrf, "exposure_ratio": _exposure_ratio}
