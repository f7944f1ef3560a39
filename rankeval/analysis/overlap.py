"""Rank-biased overlap (Webber, Moffat and Zobel 2010) of two runs, user by user.

RBO compares two rankings of a user without a truth: a reader compares the top d of each,
going on to depth d + 1 with probability p, and RBO is the expected share of overlap,
sum_d (1 - p) p^(d-1) |A_d & B_d| / d over the infinite rankings. Runs are prefixes of them,
so three numbers are reported, as the paper defines them for lists of uneven length s <= l:
``min`` (every unseen item differs: eq. 11 to depth l), ``max`` (every unseen item agrees as
early as it can), their difference the residual, and ``ext`` (eq. 32: the agreement seen goes
on). Each sum over depths is, item by item, a sum from the depth where both lists hold the
item: differences of prefix sums over flat arrays, no loop over users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.checks import report_duplicates
from rankeval.build.ordering import TIE_AWARE, order_rows
from rankeval.errors import OptionError, plural
from rankeval.io.arrow import nan_as_null, to_numpy
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.kernels.chunk import segment_positions
from rankeval.settings import Settings

KINDS = ("ext", "min", "max", "residual")


def check_p(p: Any, name: str = "rbo") -> float:
    """RBO's persistence, a number in (0, 1) (``name``: the option that gave it)."""
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0 < p < 1:
        raise OptionError(f"{{opt:{name}}} is RBO's persistence p, a number in (0, 1) (0.9 "
                          f"gives the first 10 ranks 86% of the weight), got {p!r}")
    return float(p)


def rbo_values(a: tuple[np.ndarray, np.ndarray, np.ndarray],
               b: tuple[np.ndarray, np.ndarray, np.ndarray], n_users: int, p: float
               ) -> dict[str, np.ndarray]:
    """Per user, RBO's ``ext``, ``min``, ``max`` and ``residual`` of two runs given as (user,
    pos, item) arrays: user codes 0..n_users-1, pos 1.. within each user's list, an item at
    most once per user's list. A user whose lists are both empty has none (NaN)."""
    len_a = np.bincount(a[0], minlength=n_users).astype(np.int64)
    len_b = np.bincount(b[0], minlength=n_users).astype(np.int64)
    s, longer = np.minimum(len_a, len_b), np.maximum(len_a, len_b)
    user, deeper = _shared(a, b, n_users)  # each item in both lists, and where both hold it
    top = 2 * int(longer.max()) + 1 if n_users else 1
    d = np.arange(1, top + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        powers = np.power(p, d)
    q = np.concatenate(([0.0], np.cumsum(powers / d)))  # Q(n) = sum_{d<=n} p^d / d
    w = np.concatenate(([0.0], np.cumsum(powers)))  # P(n) = sum_{d<=n} p^d
    seen = np.bincount(user, q[longer[user]] - q[deeper - 1], minlength=n_users)
    x_l = np.bincount(user, minlength=n_users).astype(np.float64)
    x_s = np.bincount(user, deeper <= s[user], minlength=n_users).astype(np.float64)
    scale = (1 - p) / p
    # depths s+1..l, where the shorter list is unseen: sum (d - s) p^d / d
    gap = (w[longer] - w[s]) - s * (q[longer] - q[s])
    rate = np.divide(x_s, s, out=np.zeros(n_users), where=s > 0)  # the shorter list's A_s
    tail = np.power(p, longer.astype(np.float64))
    ext = scale * (seen + rate * gap) + (np.divide(x_l - x_s, longer, out=np.zeros(n_users),
                                                   where=longer > 0) + rate) * tail
    low = scale * (seen - x_l * q[longer] - x_l * math.log1p(-p))
    # max: past l both lists gain an agreeing item per depth until they agree on everything,
    # at depth f = l + s - X_l; depths l+1..g hold X_l + (l - s) + 2 (d - l), then all d.
    g = np.maximum(longer + s - x_l.astype(np.int64), longer + 1) - 1
    c = x_l + longer - s
    middle = (c - 2 * longer) * (q[g] - q[longer]) + 2 * (w[g] - w[longer])
    high = scale * (seen + gap + middle) + np.power(p, g.astype(np.float64))
    none = longer == 0
    out = {"ext": ext, "min": low, "max": high, "residual": high - low}
    return {k: np.where(none, np.nan, v) for k, v in out.items()}


def _shared(a, b, n_users: int) -> tuple[np.ndarray, np.ndarray]:
    """The (user, item) pairs in both runs: their user codes, and the deeper of their two
    positions (the first depth at which both lists hold the item)."""
    n_items = int(max(a[2].max(initial=-1), b[2].max(initial=-1))) + 1
    key_a = a[0].astype(np.int64) * n_items + a[2]
    key_b = b[0].astype(np.int64) * n_items + b[2]
    _, ia, ib = np.intersect1d(key_a, key_b, assume_unique=True, return_indices=True)
    return a[0][ia], np.maximum(a[1][ia], b[1][ib]).astype(np.int64)


@dataclass(frozen=True)
class Overlap:
    """RBO of ``run`` against ``baseline`` per user (``users``: their ids), with persistence
    ``p``; ``values[kind]`` per user for ``kind`` in ``KINDS`` (NaN: both lists empty)."""

    run: str
    baseline: str
    p: float
    users: np.ndarray
    values: dict[str, np.ndarray]
    depth: int | None = None

    @property
    def defined(self) -> int:
        """Users with a list in either run."""
        return int((~np.isnan(self.values["ext"])).sum())

    def mean(self, kind: str = "ext") -> float:
        """The mean over the users with a list in either run (NaN when there is none)."""
        v = self.values[kind]
        v = v[~np.isnan(v)]
        return float(v.mean()) if len(v) else math.nan

    @property
    def name(self) -> str:
        return f"rbo(p={self.p!r})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the means (null when no user has a list)."""
        return {"run": self.run, "baseline": self.baseline, "p": self.p, "depth": self.depth,
                "users": len(self.users), "users_with_lists": self.defined,
                **{k: (None if math.isnan(m := self.mean(k)) else m) for k in KINDS}}

    def per_user_table(self) -> pa.Table:
        """One row per user: ``user_id``, ``rbo_ext``, ``rbo_min``, ``rbo_max``,
        ``rbo_residual`` (null: both lists empty)."""
        return pa.table({"user_id": pa.array(self.users.tolist(), pa.string()),
                         **{f"rbo_{k}": nan_as_null(self.values[k]) for k in KINDS}})

    @property
    def per_user(self):
        """``per_user_table`` as a pandas DataFrame."""
        return self.per_user_table().to_pandas()

    def __repr__(self) -> str:
        means = " · ".join(f"{k} {self.mean(k):.4f}" for k in KINDS)
        return (f"<Overlap {self.run} vs {self.baseline}, {self.name}, "
                f"{plural(self.defined, 'user')}: {means}>")


def overlap(run: Any, baseline: Any, settings: Settings, names: tuple[str, str], p: float,
            users: np.ndarray | None = None) -> Overlap:
    """RBO of two loaded runs (``io.load.Predictions``), each user's list ordered as the
    metrics order it (``settings.ties``; a tie-aware rule orders ties as trec_eval) and cut
    at ``settings.max_depth``; ``users``: the user ids to report (default: every user of
    either run; one in neither has no value)."""
    (ua, ub), user_ids = factorize(run.user, baseline.user)
    (ia, ib), _ = factorize(run.item, baseline.item)
    n = len(user_ids)
    a = _ranked(run, ua, ia, settings)
    b = _ranked(baseline, ub, ib, settings)
    values = rbo_values(a, b, n, p)
    ids = np.asarray(user_ids.to_pylist(), dtype=object)
    if users is not None:  # reported over these ids, in this order
        found = pc.index_in(pa.array(users.tolist(), pa.string()),
                            value_set=user_ids.cast(pa.string()))
        at = to_numpy(found.fill_null(-1)).astype(np.int64)
        values = {k: np.where(at >= 0, np.append(v, np.nan)[at], np.nan)
                  for k, v in values.items()}
        ids = np.asarray(users, dtype=object)
    return Overlap(names[0], names[1], p, ids, values, settings.max_depth)


def _ranked(preds, user: np.ndarray, item: np.ndarray, settings: Settings
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A run's (user, pos, item) in list order, repeated pairs refused (or dropped under
    ``dedupe``, keeping the best-ranked), lists cut at ``max_depth``."""
    ties = "trec" if settings.ties in TIE_AWARE else settings.ties
    perm = order_rows(user, item, preds.rank, preds.score, ties)
    rows = np.arange(len(user)) if perm is None else perm
    u, i = user[rows], item[rows]
    n_items = int(item.max(initial=-1)) + 1
    repeated = duplicates(pair_keys(u, i, n_items))
    if len(repeated):
        if not settings.dedupe:
            report_duplicates(preds, np.sort(rows[repeated]),
                              "{opt:dedupe} keeps the best-ranked one")
        keep = np.ones(len(u), dtype=bool)
        keep[repeated] = False
        u, i = u[keep], i[keep]
    pos = segment_positions(u)
    if settings.max_depth is not None:
        cut = pos <= settings.max_depth
        u, pos, i = u[cut], pos[cut], i[cut]
    return u, pos, i
