"""The inputs of an off-policy evaluation (SPEC section 10), read and coded together: the
interaction log, each new policy (a ranked run, sampled rankings, or its probabilities of
the logged slots) and a reward model, as flat arrays over the log's rows.

A log row is one shown slot. Rows are sorted by slate, then position; a slate is one showing
to one user (its ``slate_id``, or the user when the log has none). Positions run 1..L within
each slate, without gaps. Propensities are probabilities in (0, 1]; a slate's propensity is
one value for all its rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.build.checks import report_duplicates
from rankeval.build.ordering import order_rows
from rankeval.errors import InputError, report
from rankeval.io.arrow import from_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import finite_column, id_column, read_typed, report_rows
from rankeval.io.columns import resolve_role
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.readers import Source
from rankeval.kernels.chunk import segment_positions

PROPENSITIES = ("propensity", "cascade_propensity", "slate_propensity")
PROBABILITIES = ("probability", "cascade_probability", "slate_probability",
                 "conditional_probability")


@dataclass(frozen=True)
class Table:
    """One input's columns by role (ids as Arrow arrays, numbers as float64)."""

    values: dict[str, Any]
    source: Source
    columns: dict[str, str]

    @property
    def label(self) -> str:
        return self.source.label


def read(table: Any, role: str, columns: dict[str, str | None]) -> Table:
    """A log, a policy's probabilities or a reward model (``role``) from its opened table
    (``io.load.open_input``), its columns found by name or alias (``columns``: the
    ``{column}_col`` overrides)."""
    found = {c: n for c, n in resolve_role(table.columns, role, columns, table.label).items()
             if n is not None}
    ids = {"user", "item", "slate"}
    data_ = read_typed(table, {n: ID if c in ids else pa.float64() for c, n in found.items()})
    label = table.label
    values: dict[str, Any] = {}
    for c, n in found.items():
        values[c] = id_column(data_, n, label) if c in ids else finite_column(data_, n, label)
    _check_numbers(values, found, label)
    return Table(values, table.described(data_.num_rows), found)


# The smallest propensity a log may hold: 1/p squared, over up to 10^12 rows, stays finite
MIN_PROPENSITY = 1e-100


def _check_numbers(values: dict[str, Any], found: dict[str, str], label: str) -> None:
    """Positions are whole numbers from 1; probabilities lie in [0, 1], propensities in
    (0, 1]: a logged slot had a chance of being shown."""
    if "rank" in values:
        pos = values["rank"]
        bad = np.flatnonzero((pos < 1) | (pos != np.floor(pos)))
        if len(bad):
            report_rows(label, "positions that are not whole numbers from 1", found["rank"],
                         bad, lambda i: float(pos[i]))
    for c in PROPENSITIES:
        if c in values:
            p = values[c]
            bad = np.flatnonzero(~((p > 0) & (p <= 1)))
            if len(bad):
                report_rows(label, "propensities outside (0, 1] (a logged slot had a chance "
                             "of being shown)", found[c], bad, lambda i, p=p: float(p[i]))
            tiny = np.flatnonzero((p > 0) & (p < MIN_PROPENSITY))
            if len(tiny):
                report_rows(label, f"propensities below {MIN_PROPENSITY:g} (a weight 1/p past "
                             f"{1 / MIN_PROPENSITY:g} cannot be squared and summed in 64-bit "
                             "floats; no logging policy showed a slot that rarely)", found[c],
                             tiny, lambda i, p=p: float(p[i]))
    for c in PROBABILITIES:
        if c in values:
            p = values[c]
            bad = np.flatnonzero(~((p >= 0) & (p <= 1 + 1e-9)))
            if len(bad):
                report_rows(label, "probabilities outside [0, 1]", found[c], bad,
                             lambda i, p=p: float(p[i]))


@dataclass(frozen=True)
class Log:
    """The log's rows sorted by slate and position: ``slate`` codes (0..n-1), positions,
    item codes, rewards and the propensities given; per slate its first row, length and
    user code. ``ids``: the slates' own ids (the users' when the log has no slate column)."""

    slate: np.ndarray
    position: np.ndarray
    item: np.ndarray
    reward: np.ndarray
    propensity: dict[str, np.ndarray]
    start: np.ndarray
    length: np.ndarray
    slate_user: np.ndarray
    ids: pa.Array
    has_slates: bool
    source: Source
    columns: dict[str, str]
    order: np.ndarray  # log rows in file order -> sorted order (for messages)
    index: np.ndarray  # a slate's code (or a user's, without slates) -> its slate, -1: none

    def slates(self, codes: np.ndarray) -> np.ndarray:
        """Another input's slate codes as this log's slates (-1: not in the log)."""
        codes = codes.astype(np.int64)
        inside = codes < len(self.index)
        return np.where(inside, self.index[np.minimum(codes, len(self.index) - 1)], -1)

    @property
    def n(self) -> int:
        return len(self.start)

    @property
    def longest(self) -> int:
        return int(self.length.max(initial=0))

    def matrix(self, values: np.ndarray, fill: Any) -> np.ndarray:
        """Per-row ``values`` as a slates x longest matrix (``fill`` past each slate's end)."""
        out = np.full((self.n, self.longest), fill, dtype=np.asarray(values).dtype)
        out[self.slate, self.position - 1] = values
        return out


@dataclass(frozen=True)
class Codes:
    """The shared id dictionaries: users and items of every input coded together."""

    users: pa.Array
    items: pa.Array


def code_log(log: Table, user: np.ndarray, item: np.ndarray, slate: np.ndarray | None,
             slate_ids: pa.Array | None) -> Log:
    """The log's rows sorted and checked (``user``, ``item``, ``slate``: its codes in the
    dictionaries shared with the other inputs; ``slate_ids``: the slates' dictionary)."""
    label = log.label
    position = log.values["rank"].astype(np.int64)
    slate_code = (slate if slate is not None else user).astype(np.int64)
    order = np.lexsort((position, slate_code))
    s, pos = slate_code[order], position[order]
    dup = np.flatnonzero((s[1:] == s[:-1]) & (pos[1:] == pos[:-1]))
    if len(dup):
        rows = np.sort(order[dup + 1])
        report(InputError(label, "positions repeated within a slate", column=log.columns["rank"],
                          count=len(rows), examples=[(int(r) + 1, int(position[r]))
                                                     for r in rows[:5]]))
    first = np.r_[True, s[1:] != s[:-1]] if len(s) else np.zeros(0, bool)
    start = np.flatnonzero(first)
    length = np.diff(np.r_[start, len(s)])
    expected = segment_positions(s)
    gap = np.flatnonzero(pos != expected)
    if len(gap) and not len(dup):
        rows = np.sort(order[gap])
        report(InputError(label, "slates whose positions do not run 1, 2, 3, ... (a slot "
                          "missing from the log)", column=log.columns["rank"],
                          count=len(np.unique(s[gap])),
                          examples=[(int(r) + 1, int(position[r])) for r in rows[:5]]))
    slate_user = user[order][start].astype(np.int64)
    if "slate" in log.values:
        mixed = np.flatnonzero(np.repeat(slate_user, length) != user[order])
        if len(mixed):
            rows = np.sort(order[mixed])
            report(InputError(label, "slates shown to several users", column=log.columns["slate"],
                              count=len(rows), examples=[(int(r) + 1, "") for r in rows[:5]]))
    dense = np.repeat(np.arange(len(start)), length)
    props = {c: log.values[c][order] for c in PROPENSITIES if c in log.values}
    if "slate_propensity" in props:
        p = props["slate_propensity"]
        varies = np.flatnonzero(p != p[start][dense])
        if len(varies):
            rows = np.sort(order[varies])
            report(InputError(label, "slate propensities that differ within a slate",
                              column=log.columns["slate_propensity"], count=len(rows),
                              examples=[(int(r) + 1, float(log.values["slate_propensity"][r]))
                                        for r in rows[:5]]))
    if "cascade_propensity" in props:  # a longer prefix is never likelier than a shorter one
        c = props["cascade_propensity"]
        rises = np.flatnonzero((dense[1:] == dense[:-1]) & (c[1:] > c[:-1] * (1 + 1e-9)))
        if len(rises):
            rows = np.sort(order[rises + 1])
            report(InputError(label, "cascade propensities that rise down a slate (the top k+1 "
                              "cannot be likelier than the top k)",
                              column=log.columns["cascade_propensity"], count=len(rows),
                              examples=[(int(r) + 1, float(log.values["cascade_propensity"][r]))
                                        for r in rows[:5]]))
    index = np.full(int(slate_code.max(initial=-1)) + 1, -1, dtype=np.int64)
    index[s[start]] = np.arange(len(start))
    ids = slate_ids.take(from_numpy(s[start])) if slate_ids is not None else None
    return Log(slate=dense, position=pos, item=item[order].astype(np.int64),
               reward=log.values["reward"][order], propensity=props, start=start,
               length=length, slate_user=slate_user,
               ids=ids if ids is not None else pa.array([], pa.string()),
               has_slates="slate" in log.values, source=log.source, columns=log.columns,
               order=order, index=index)


@dataclass(frozen=True)
class Rankings:
    """A run's ranked lists (one per user, or several sampled ones): per list its user code,
    and a lists x depth matrix of item codes (-1 past a list's end)."""

    user: np.ndarray
    items: np.ndarray


def code_rankings(preds, user: np.ndarray, item: np.ndarray, depth: int, ties: str
                  ) -> Rankings:
    """Each list of a run (a user's, or each of its samples) ordered as ``score`` orders it,
    to ``depth``; repeated items within a list are an error, as in ``score``."""
    if preds.sample is not None:
        (sample,), _ = factorize(preds.sample)
        n_samples = int(sample.max(initial=0)) + 1
        lists = user.astype(np.int64) * n_samples + sample
    else:
        lists = user.astype(np.int64)
    _, list_code = np.unique(lists, return_inverse=True)  # lists of a user side by side
    n_items = int(item.max(initial=0)) + 1
    dup = duplicates(pair_keys(list_code, item.astype(np.int64), n_items))
    if len(dup):
        report_duplicates(preds, dup, None)
    order = order_rows(list_code, item, preds.rank, preds.score, ties)
    order = np.arange(len(list_code)) if order is None else order
    lc = list_code[order]
    pos = segment_positions(lc)
    keep = pos <= depth
    first = np.r_[True, lc[1:] != lc[:-1]] if len(lc) else np.zeros(0, bool)
    list_user = user[order][first].astype(np.int64)
    n_lists = int(first.sum())
    dense = np.cumsum(first) - 1
    items = np.full((n_lists, max(depth, 1)), -1, dtype=np.int64)
    items[dense[keep], pos[keep] - 1] = item[order][keep]
    return Rankings(list_user, items)
