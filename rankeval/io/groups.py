"""Item groups (``--item-groups``): which group (provider, language, popularity tier) each item
belongs to, per group column; for the group-fairness metric ``awrf``.

One row per (item, group) membership: an item on several rows of a column belongs to each of
those groups in equal parts (1/k, as the TREC Fair Ranking track splits a page over its k
regions). An item the file does not name belongs to the group ``(none)``: it still takes the
attention of its rank, as TREC 2022 counts pages of unknown group as a group of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import id_column, read_typed
from rankeval.io.encode import factorize
from rankeval.io.features import item_and_others
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Source, Table

NONE = "(none)"  # the group of an item the file does not name


@dataclass(frozen=True)
class Membership:
    """One group column: ``names`` of its groups (``(none)`` last), and per membership row
    its item id, group index and share of the item (1/k for an item in k groups)."""

    column: str
    names: list[str]
    item: pa.Array
    group: np.ndarray
    share: np.ndarray

    def of(self, item_ids: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR rows over ``item_ids`` (an evaluation's item dictionary): (row pointer into
        the memberships, their groups, their shares); an item without a row is in
        ``(none)``."""
        at = to_numpy(fill_null(pc.index_in(self.item, value_set=item_ids), -1))
        at = at.astype(np.int64)
        kept = at >= 0
        n = len(item_ids)
        code, group, share = at[kept], self.group[kept], self.share[kept]
        named = np.zeros(n, dtype=bool)
        named[code] = True
        lone = np.flatnonzero(~named)
        code = np.concatenate([code, lone])
        group = np.concatenate([group, np.full(len(lone), len(self.names) - 1)])
        share = np.concatenate([share, np.ones(len(lone))])
        order = np.argsort(code, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(code, minlength=n))])
        return ptr, group[order].astype(np.int64), share[order]

    def catalog_share(self) -> np.ndarray:
        """Each group's share of the items the file names (an item split over its groups)."""
        counts = np.bincount(self.group, self.share, minlength=len(self.names))
        return counts / max(counts.sum(), 1.0)


@dataclass(frozen=True)
class ItemGroups:
    """Every group column of an ``--item-groups`` file, by column name (file order)."""

    columns: dict[str, Membership]
    source: Source

    def column(self, name: str | None) -> Membership:
        """The column ``name`` (``awrf(by=...)``), or the file's first group column."""
        if name is None:
            return next(iter(self.columns.values()))
        if name not in self.columns:
            raise InputError(self.source.label, f"no group column {name!r} (by=); group "
                             f"columns: {', '.join(self.columns)}")
        return self.columns[name]


def load_item_groups(table: Table | MemoryTable, item_col: str | None = None) -> ItemGroups:
    """The item column and every other column as a group column (empty cells: no group in
    that column for that row)."""
    label = table.label
    item, others = item_and_others(table, "item_groups", item_col, "no group column: give "
                                   "one or more columns (provider, language, ...) beside the "
                                   "item column")
    types: dict[str, pa.DataType] = {item: ID}
    types.update(dict.fromkeys(others, ID))
    data = read_typed(table, types)
    items = id_column(data, item, label)
    columns = {}
    for name in others:
        values = data.column(name).cast(pa.string())
        empty = fill_null(pc.equal(values, pa.scalar("")), True)
        rows = from_numpy(np.flatnonzero(~to_numpy(empty)))
        if not len(rows):
            raise InputError(label, "a group column without any group", column=name)
        pair = pa.Table.from_arrays([items.take(rows), values.take(rows)], ["item", "group"])
        pair = pair.group_by(["item", "group"], use_threads=False).aggregate([])
        (group,), names = factorize(pair.column("group"))  # groups in byte order
        (member,), _ = factorize(pair.column("item"))
        listed = [str(g) for g in names.to_pylist()]
        if NONE in listed:
            raise InputError(label, f"{NONE!r} names the items without a group", column=name)
        share = 1.0 / np.bincount(member)[member]  # an item in k groups: 1/k in each
        columns[name] = Membership(name, [*listed, NONE],
                                   pair.column("item").combine_chunks(),
                                   group.astype(np.int64), share)
    return ItemGroups(columns, table.described(data.num_rows))
