"""A read table's columns checked, for every loader of inputs: ids never empty, numbers finite,
each bad row reported with its line (``rankeval validate`` collects them all and carries on)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, is_collecting, report
from rankeval.io.arrow import fill_null, string_buffers, to_numpy
from rankeval.io.cast import ID, unparseable
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Table


def report_rows(
    label: str, problem: str, column: str, idx: np.ndarray, show
) -> None:
    """One error for the rows ``idx`` (0-based) of ``column``, with ``show(i)`` as examples."""
    report(
        InputError(
            label,
            problem,
            column=column,
            count=len(idx),
            examples=[(int(i) + 1, show(i)) for i in idx[:5]],
        )
    )


def id_column(table: pa.Table, name: str, label: str) -> pa.ChunkedArray:
    col = table.column(name)
    if pa.types.is_integer(col.type):  # never empty; a null made the column text
        return col
    if col.null_count == 0:  # the common case: check each distinct value once
        values = [c.dictionary if isinstance(c, pa.DictionaryArray) else c for c in col.chunks]
        if not any(_has_empty(v) for v in values):
            return col
    if pa.types.is_dictionary(col.type):
        col = col.cast(pa.string())
    # pyarrow-stubs: equal takes only Arrow scalars; pyarrow converts a Python number
    empty = pc.equal(pc.utf8_length(col), 0)  # type: ignore[call-overload]
    bad = pc.or_kleene(pc.is_null(col), empty)
    bad = fill_null(bad, True)
    if pc.any(bad).as_py():
        idx = np.flatnonzero(to_numpy(bad))
        report_rows(label, "empty ids", name, idx, lambda i: "")
        col = fill_null(col, "")
    return col


def _has_empty(text: pa.Array) -> bool:
    """Whether a text array holds an empty value: two equal offsets, read in place (a
    length per value would be a new array the size of the column)."""
    if not len(text):
        return False
    if not (pa.types.is_string(text.type) or pa.types.is_binary(text.type)):
        # pyarrow-stubs: binary_length only on the named binary and string array classes,
        # pyarrow on any array of a binary-like type (the only ones here)
        return pc.min(pc.binary_length(text)).as_py() == 0  # type: ignore[call-overload]
    offsets, _ = string_buffers(text)
    return bool((offsets[1:] == offsets[:-1]).any())


def finite_column(table: pa.Table, name: str, label: str) -> np.ndarray:
    """A numeric column as float64, refusing empty, NaN and infinite values."""
    col = table.column(name)
    if col.null_count:
        idx = np.flatnonzero(to_numpy(col.is_null()))
        report_rows(label, "empty values", name, idx, lambda i: "")
        col = fill_null(col, 0)
    values = to_numpy(col).astype(np.float64, copy=False)
    # NaN wins min and max, and an infinity is one of them: two reductions, where isfinite
    # wrote a flag per row into fresh memory (10M scores: 0.08 -> 0.02 s)
    if len(values) and not (np.isfinite(values.min()) and np.isfinite(values.max())):
        for test, problem in ((np.isnan, "NaN values"), (np.isinf, "infinite values")):
            idx = np.flatnonzero(test(values))
            if len(idx):
                report_rows(label, problem, name, idx, lambda i: float(values[i]))
        values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
    return values


def whole_column(table: pa.Table, name: str, label: str, what: str) -> np.ndarray:
    """A column of whole numbers as int64: integers as they are; floats (text files read so)
    when each is whole and below 2^53 in size, past which neighbours share one float. Empty,
    NaN, infinite, fractional and inexact values are refused, naming their rows; ``what``
    names the values in the message (``positions``)."""
    col = table.column(name)
    if col.null_count:
        report_rows(label, f"empty {what}", name, np.flatnonzero(to_numpy(col.is_null())),
                    lambda i: "")
        col = fill_null(col, 0)
    if pa.types.is_integer(col.type):
        return to_numpy(col).astype(np.int64, copy=False)
    values = to_numpy(col).astype(np.float64, copy=False)
    finite = np.isfinite(values)
    for bad, problem in ((~finite, f"{what} that are not finite numbers"),
                         (finite & (values != np.floor(values)),
                          f"{what} that are not whole numbers"),
                         (finite & (np.abs(values) >= 2**53), f"{what} too large to be exact")):
        if bad.any():
            report_rows(label, problem, name, np.flatnonzero(bad),
                        lambda i: as_number(float(values[i])))
    return np.where(finite, values, 0).astype(np.int64)


def read_typed(table: Table | MemoryTable, types: dict[str, pa.DataType]) -> pa.Table:
    try:
        data = table.read(types)
    except InputError as exc:
        if not is_collecting() or "non-numeric" not in exc.problem:
            raise
        data = _read_leniently(table, types)
    if data.num_rows == 0:
        raise InputError(table.label, "no data rows (only a header)")
    return data


def _read_leniently(table: Table | MemoryTable, types: dict[str, pa.DataType]) -> pa.Table:
    """For ``rankeval validate``: report every column's non-numeric values, then carry on with
    them replaced by 1 so that the checks of the other columns and of the join still run."""
    numeric = [n for n, t in types.items() if t != ID and not pa.types.is_string(t)]
    text = table.read({n: pa.string() if n in numeric else t for n, t in types.items()})
    columns = []
    for name in text.column_names:
        col: pa.Array | pa.ChunkedArray = text.column(name)
        if name in numeric:
            values = to_numpy(col).astype(object)
            bad = unparseable(values)
            if bad.any():
                idx = np.flatnonzero(bad)
                report(InputError(
                    table.label, "non-numeric values", column=name, count=len(idx),
                    examples=[(int(i) + 1, values[i]) for i in idx[:5]],
                    unit=getattr(table, "unit", "row"),
                ))
                values[bad] = "1"
            values[values == ""] = None
            col = pa.array(values, pa.string()).cast(pa.float64())
        columns.append(col)
    return pa.table(columns, names=text.column_names)


def as_number(x: float) -> float | int:
    """A value as an example: whole numbers without ".0", but huge ones as floats (1e+300),
    whose full decimal expansion would be cut short in the message."""
    return int(x) if float(x).is_integer() and abs(x) < 1e18 else float(x)
