"""Apache Parquet: typed columns read straight into Arrow, ids dictionary-encoded from the
file's own dictionary pages (plain where the reader would hash every row: mostly distinct
ids whose pages spilled); list columns (item vectors) kept as they are stored."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
# Dictionary indices take at most 4 bytes a row (32 bits): data pages holding more per row
# (compressed) hold mostly the values themselves
_INDEX_BYTES = 4
# The share of the look's rows that are distinct from which a spilled column (its writer's
# dictionary pages filled up) is read plain: the reader would hash every row into a new
# dictionary per row group, one insert for most of them. Measured on UUIDs (ids of preds and
# truth read, then coded; medians of 5): 0.43 and 0.44 distinct, the dictionary 0.18 and
# 0.29 s faster; 0.53 equal, and plain text 1.6x the peak memory (3.3 s, 466 -> 726 MiB);
# 0.75, plain 0.23 s faster of 2.87 (2.8M rows); ASIN-like ids 0.84, plain twice as fast
_SPILLED_SHARE = 0.6


def _dictionary_ids(t: Table, ids: list[str]) -> list[str]:
    """The id columns read as dictionaries: all but the text ids the reader would hash row
    by row into a dictionary as long as the rows, which ``factorize`` codes from plain text
    with one hash table (or packs into numbers and hashes none). Those are the text ids that
    do not repeat in the file's first rows and that a key holds whole
    (``one_width.read_plain``: 5M ASIN-like ids over 5M items), and those mostly distinct
    there whose column spilled (``_spilled``: 2.8M UUID rows over 600,000 items, read and
    coded 1.85 -> 1.43 s). A column whose rows repeat in runs (users, sorted) stays a
    dictionary even when spilled: its rows find their id in the reader's dictionary."""
    file = _parquet().ParquetFile(t.source())
    text = [name for name in ids if _is_text(file.schema_arrow.field(name).type)]
    if not text or file.metadata.num_rows < _LOOK_ROWS:
        return ids
    head = next(file.iter_batches(batch_size=_LOOK_ROWS, columns=text, use_threads=False))

    def plain(name: str) -> bool:
        sample = head.column(name)
        if read_plain(sample):
            return True
        distinct = pc.count_distinct(sample).as_py()
        return distinct >= _SPILLED_SHARE * len(sample) and _spilled(file, name)

    kept = {name for name in text if plain(name)}
    return [name for name in ids if name not in kept]


def _spilled(file: Any, name: str) -> bool:
    """Whether a column's rows are stored mostly as values rather than as indices into its
    dictionary pages: it has none, or its writer's dictionary page filled up (pyarrow's and
    parquet-mr's hold 1 MiB) and the pages after it hold plain values. The encodings a
    column chunk lists cannot tell (its dictionary page is PLAIN too); the bytes of its data
    pages per row can (``_INDEX_BYTES``)."""
    meta = file.metadata
    if not meta.num_row_groups:
        return False
    leaves = meta.row_group(0)  # a flat column is the leaf of its name (a nested one's
    # leaves before it shift the numbers)
    column = [leaves.column(i).path_in_schema for i in range(leaves.num_columns)].index(name)
    data = rows = 0
    for group in range(meta.num_row_groups):
        chunk = meta.row_group(group).column(column)
        if not chunk.has_dictionary_page:
            return True
        data += chunk.total_compressed_size - (chunk.data_page_offset
                                               - chunk.dictionary_page_offset)
        rows += chunk.num_values
    return data > _INDEX_BYTES * rows


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
