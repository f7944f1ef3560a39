"""Apache Parquet: typed columns read straight into Arrow, ids dictionary-encoded from the
file's own dictionary pages; list columns (item vectors) kept as they are stored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankeval.errors import InputError, one_line
from rankeval.io.cast import ID, cast_columns
from rankeval.io.one_width import read_plain
from rankeval.kernels.threads import each

if TYPE_CHECKING:
    from rankeval.io.readers import Table


def _parquet():
    """pyarrow.parquet, imported when a Parquet file is read (it brings pyarrow.fs and ssl:
    about 25 ms of every CSV run otherwise)."""
    import pyarrow.parquet  # import cost: pyarrow.fs and ssl, for Parquet inputs only

    return pyarrow.parquet


def _unreadable(t: Table, exc: BaseException) -> InputError:
    return InputError(t.label, f"not a readable Parquet file ({one_line(exc)})")


def columns(t: Table) -> list[str]:
    try:
        return list(_parquet().read_schema(t.source()).names)
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(t, exc) from None


def column_type(t: Table, name: str) -> pa.DataType:
    """The stored type of one column."""
    try:
        return _parquet().read_schema(t.source()).field(name).type
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(t, exc) from None


def nested(t: Table, name: str) -> pa.ChunkedArray | None:
    """A list-typed column as stored (item vectors), or None when the column is flat."""
    try:
        if not pa.types.is_nested(_parquet().read_schema(t.source()).field(name).type):
            return None
        return _parquet().ParquetFile(t.source()).read(columns=[name]).column(name)
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(t, exc) from None


def read(t: Table, types: dict[str, pa.DataType]) -> pa.Table:
    """The columns in ``types``, converted to those types."""
    try:
        schema = _parquet().read_schema(t.source())
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(t, exc) from None
    for name in types:
        kind = schema.field(name).type
        if pa.types.is_nested(kind):  # read_dictionary cannot take them: say so first
            raise InputError(t.label, f"values of type {kind}: a flat column is needed",
                             column=name)
    try:
        ids = [name for name, typ in types.items() if typ == ID]
        table = _read_halves(t, list(types), _dictionary_ids(t, ids))
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(t, exc) from None
    return cast_columns(table, types, t.label)


_LOOK_ROWS = 2048  # the look at a file's first rows: its first data page of each column


def _dictionary_ids(t: Table, ids: list[str]) -> list[str]:
    """The id columns read as dictionaries: all but the text ids that do not repeat in the
    file's first rows and that a key holds whole (``one_width.read_plain``), which ``factorize``
    packs into numbers from plain text. A dictionary of those is as long as the column, and
    once the writer's dictionary page overflows the reader hashes every row into it (5M
    ASIN-like ids over 5M items)."""
    file = _parquet().ParquetFile(t.source())
    text = [name for name in ids if _is_text(file.schema_arrow.field(name).type)]
    if not text or file.metadata.num_rows < _LOOK_ROWS:
        return ids
    head = next(file.iter_batches(batch_size=_LOOK_ROWS, columns=text, use_threads=False))
    plain = {name for name in text if read_plain(head.column(name))}
    return [name for name in ids if name not in plain]


def _is_text(kind: pa.DataType) -> bool:
    """Text with 32- or 64-bit offsets (pyarrow writes the first, pandas 3 the second)."""
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _read_halves(t: Table, names: list[str], ids: list[str]) -> pa.Table:
    """The columns ``names``, ids dictionary-encoded straight from the file's own dictionary
    pages; the row groups in two halves of about equal rows, each read on its core. Arrow
    reads a file's columns in parallel but each column's row groups one after another, so
    the id column whose dictionary pages overflowed (the writer then stores plain values and
    the reader hashes every row) kept one core busy while the other waited: 10M UUID rows,
    1.7-2.1 -> 1.1-1.35 s. ParquetFile.read, unlike pq.read_table, does not import pandas
    (0.2 s)."""
    file = _parquet().ParquetFile(t.source(), read_dictionary=ids)
    rows = [file.metadata.row_group(g).num_rows for g in range(file.num_row_groups)]
    if len(rows) < 2:
        return file.read(columns=names, use_threads=True)
    half = int(np.searchsorted(np.cumsum(rows), sum(rows) / 2))
    split = [range(0, max(half, 1)), range(max(half, 1), len(rows))]

    def read(groups: range) -> pa.Table:  # a file object of its own per thread
        return _parquet().ParquetFile(t.source(), read_dictionary=ids).read_row_groups(
            list(groups), columns=names, use_threads=True)

    return pa.concat_tables(each(read, split))


def encode(table: pa.Table, fmt: str, kind: str, tag: str, label: str) -> bytes:
    sink = pa.BufferOutputStream()
    _parquet().write_table(table, sink)
    return sink.getvalue().to_pybytes()


def spark_read(spark, path: str, fmt: str, role: str, reading: dict[str, Any]):
    return spark.read.parquet(path)
