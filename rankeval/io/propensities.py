"""Explicit propensities (``--propensity FILE``): each item's, or each (user, item) pair's,
probability of having been observed, for the propensity-weighted metrics (``ips_recall``,
...) in place of the popularity model's. With a user column the file is per pair, else per
item. A relevant truth row the file has no propensity for is an error: leaving it out
would change the metric's population without a word."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import fill_null, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import as_number, finite_column, id_column, read_typed, report_rows
from rankeval.io.columns import resolve_role
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Source, Table


@dataclass(frozen=True)
class Propensities:
    """One probability of observation per item, or per (user, item) pair (``user`` given)."""

    item: pa.ChunkedArray
    user: pa.ChunkedArray | None
    p: np.ndarray
    source: Source
    columns: dict[str, str]

    def at(self, user_ids: pa.Array, item_ids: pa.Array, user: np.ndarray,
           item: np.ndarray) -> np.ndarray:
        """The propensity of each pair (``user``, ``item``: codes into ``user_ids`` and
        ``item_ids``, an evaluation's dictionaries); NaN where the file has none."""
        f_item = _codes(self.item, item_ids)
        if self.user is None:
            by_item = np.full(max(len(item_ids), 1), np.nan)
            known = f_item >= 0
            by_item[f_item[known]] = self.p[known]
            return by_item[item]
        f_user = _codes(self.user, user_ids)
        known = (f_item >= 0) & (f_user >= 0)
        n_items = max(len(item_ids), 1)
        keys = pair_keys(f_user[known], f_item[known], n_items)
        order = np.argsort(keys)
        keys, p = keys[order], self.p[known][order]
        wanted = pair_keys(user, item, n_items)
        if not len(keys):
            return np.full(len(wanted), np.nan)
        at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return np.where(keys[at] == wanted, p[at], np.nan)

    def missing(self, user_ids: pa.Array, item_ids: pa.Array, user: np.ndarray,
                item: np.ndarray, p: np.ndarray) -> InputError:
        """The error for relevant truth rows without a propensity (``p`` NaN)."""
        rows = np.flatnonzero(np.isnan(p))
        per = "(user, item) pairs" if self.user is not None else "items"
        shown = [f"{user_ids[int(user[r])].as_py()} / {item_ids[int(item[r])].as_py()}"
                 if self.user is not None else str(item_ids[int(item[r])].as_py())
                 for r in rows[:5]]
        return InputError(self.source.label, f"{len(rows):,} relevant {per} of the truth "
                          f"have no propensity here, e.g. {', '.join(shown)}: give every "
                          "relevant one a probability of observation")


def _codes(ids: pa.ChunkedArray, dictionary: pa.Array) -> np.ndarray:
    return to_numpy(fill_null(pc.index_in(ids, value_set=dictionary), -1)).astype(np.int64)


def load_propensities(table: Table | MemoryTable, user_col: str | None = None,
                      item_col: str | None = None,
                      propensity_col: str | None = None) -> Propensities:
    """An item column, a propensity column (probabilities in (0, 1]) and, for per-pair
    propensities, a user column; each item (or pair) once."""
    label = table.label
    found = resolve_role(table.columns, "propensity", {
        "user_col": user_col, "item_col": item_col, "propensity_col": propensity_col}, label)
    user, item, col = found["user"], found["item"], found["propensity"]
    assert item is not None and col is not None  # required: resolve_role raises without them
    types: dict[str, pa.DataType] = {item: ID, col: pa.float64()} | (
        {user: ID} if user is not None else {})
    data = read_typed(table, types)
    p = finite_column(data, col, label)
    bad = ~((p > 0) & (p <= 1))
    if bad.any():
        report_rows(label, "propensities outside (0, 1]: a probability of observation",
                     col, np.flatnonzero(bad), lambda i: as_number(float(p[i])))
    items = id_column(data, item, label)
    users = None if user is None else id_column(data, user, label)
    if users is None:
        (codes,), _ = factorize(items)
        repeat = duplicates(codes)
    else:
        (u,), _ = factorize(users)
        (i,), _ = factorize(items)
        repeat = duplicates(pair_keys(u, i, int(i.max(initial=0)) + 1))
    if len(repeat):
        def shown(r: int) -> str:
            i = str(items[r].as_py())
            return i if users is None else f"{users[r].as_py()} / {i}"

        raise InputError(label, f"{'(user, item) pairs' if users is not None else 'items'} "
                         "given more than once", column=item if users is None else None,
                         count=len(repeat), examples=[(int(r) + 1, shown(int(r)))
                                                      for r in repeat[:5]])
    columns = {"item": item, "propensity": col} | ({"user": user} if user else {})
    return Propensities(items, users, p, table.described(data.num_rows), columns)
