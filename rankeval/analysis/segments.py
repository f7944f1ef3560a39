"""Per-segment breakdowns (``--segments FILE --segment-by COLUMN``): every per-user metric
averaged within each value of a user attribute, with user counts. Users missing from the
segment file form a counted ``(missing)`` segment; a numeric attribute can be cut into
quantile bins (``COLUMN:quartiles``, ``COLUMN:deciles``, ``COLUMN:N``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, OptionError
from rankeval.io.arrow import fill_null, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import read_typed
from rankeval.io.columns import resolve_role
from rankeval.kernels.distinct import distinct, with_inverse

MISSING = "(missing)"
_BINS = {"quartiles": 4, "deciles": 10}


@dataclass(frozen=True)
class Segment:
    value: str
    users: int
    metrics: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "users": self.users, "metrics": self.metrics}


def parse_by(words) -> list[tuple[str, int | None, str]]:
    """``country`` -> (country, None, word); ``activity:quartiles`` -> (activity, 4, word)."""
    out = []
    for word in words:
        name, _, how = str(word).partition(":")
        bins = None
        if how:
            how = how.strip().lower()
            bins = _BINS.get(how) or (int(how) if how.isdigit() and int(how) >= 2 else None)
            if bins is None:
                raise OptionError(f"{{option}} {word!r}: bin a numeric column with :quartiles, "
                                  ":deciles or :N (N >= 2 quantile bins)", "segment_by")
        out.append((name.strip(), bins, str(word).strip()))
    if not out:
        raise OptionError("{opt:segments} needs {opt:segment_by} COLUMN", "segment_by")
    return out


def with_bins(by, bins: str | int | None) -> list[str]:
    """``--segment-bins``: ``bins`` for every column of ``by`` that names none of its own
    (``activity`` -> ``activity:quartiles``); such a column must then be numeric."""
    words = [by] if isinstance(by, str) else list(by)
    if bins is None or bins == "":
        return words
    try:
        parse_by([f"column:{bins}"])
    except OptionError:
        raise OptionError(f"{{option}} {bins!r}: quartiles, deciles or N (N >= 2 quantile "
                          "bins)", "segment_bins") from None
    return [w if ":" in str(w) else f"{w}:{bins}" for w in words]


def segment(values: dict[str, np.ndarray], users: pa.Array, table, by
            ) -> dict[str, list[Segment]]:
    """Per column of ``by``: one ``Segment`` per value (in value order, ``(missing)`` last),
    from each per-user metric's ``values`` over ``users``."""
    return {word: _means(values, labels, rank)
            for word, (labels, rank) in user_labels(users, table, by).items()}


def user_labels(user_ids: pa.Array, table, by) -> dict[str, tuple[np.ndarray, dict | None]]:
    """Per column of ``by``: each user's segment label (``(missing)`` when absent from the
    table), and the order of binned labels (None: value order)."""
    users, columns = table_labels(table, by)
    where = to_numpy(fill_null(pc.index_in(user_ids.cast(pa.string()), value_set=users),
                               -1)).astype(np.int64)
    return {word: (np.where(where >= 0, labels[np.maximum(where, 0)], MISSING).astype(str),
                   rank) for word, (labels, rank) in columns.items()}


def table_labels(table, by) -> tuple[pa.Array, dict[str, tuple[np.ndarray, dict | None]]]:
    """The segment table's users (as text) and, per column of ``by``, each row's label and
    the order of binned labels (None: value order)."""
    columns = parse_by(by)
    label = table.label
    user_col = _user_column(table)
    for name, _, _ in columns:
        if name not in table.columns:
            raise InputError(label, f"no column {name!r} to segment by; columns found: "
                             f"{', '.join(repr(c) for c in table.columns)}")
    data = read_typed(table, {user_col: ID, **{n: pa.string() for n, _, _ in columns}})
    users = data.column(user_col).cast(pa.string()).combine_chunks()
    if len(pc.unique(users)) < len(users):
        raise InputError(label, "users listed more than once", column=user_col)
    out = {}
    for name, bins, word in columns:
        rank = None
        if bins:
            numbers = read_typed(table, {name: pa.float64()}).column(name)
            labels, names = _bin(to_numpy(numbers.combine_chunks()).astype(np.float64), bins)
            rank = {n: i for i, n in enumerate(names)}
        else:
            labels = to_numpy(fill_null(data.column(name), ""))
        out[word] = (np.asarray(labels, dtype=object), rank)
    return users, out


def ordered_values(labels: np.ndarray, rank: dict | None) -> list[str]:
    """The distinct labels in display order: bins in order, ``(missing)`` last."""
    values = distinct(labels).tolist()
    return sorted(values, key=lambda v: (v == MISSING, rank.get(v, 0) if rank else 0, v))


def _user_column(table) -> str:
    user = resolve_role(table.columns, "segments", {}, table.label)["user"]
    assert user is not None  # required: resolve_role raises without it
    return user


def _bin(values: np.ndarray, bins: int) -> tuple[np.ndarray, list[str]]:
    """Quantile bins of a numeric column, labelled by their ranges (``[3, 7)``), and the
    labels in bin order."""
    edges = distinct(np.quantile(values, np.linspace(0, 1, bins + 1)))
    if len(edges) < 2:
        only = f"[{edges[0]:g}]" if len(edges) else "[]"
        return np.full(len(values), only, dtype=object), [only]
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    names = np.array([f"[{edges[i]:g}, {edges[i + 1]:g}{']' if i == len(edges) - 2 else ')'}"
                      for i in range(len(edges) - 1)], dtype=object)
    return names[idx], list(names)


def _means(values_of: dict[str, np.ndarray], per_user: np.ndarray,
           rank: dict[str, int] | None = None) -> list[Segment]:
    """Each segment's mean of every per-user metric (users a metric cannot score left out),
    by one weighted count per metric, not a loop over users."""
    values, codes = with_inverse(per_user)
    n = len(values)
    sizes = np.bincount(codes, minlength=n)
    means = {}
    for metric, v in values_of.items():
        ok = ~np.isnan(v)
        total = np.bincount(codes[ok], v[ok], minlength=n)
        count = np.bincount(codes[ok], minlength=n)
        # a segment where no user has a value: undefined (NaN), never 0 (SPEC section 9)
        means[metric] = np.divide(total, count, out=np.full(n, np.nan), where=count > 0)
    index = {v: i for i, v in enumerate(values.tolist())}
    return [Segment(v, int(sizes[index[v]]), {m: float(x[index[v]]) for m, x in means.items()})
            for v in ordered_values(values, rank)]
