"""The Spark engine's shuffle for Parquet inputs given by path: rows cut by user in Python,
sent through Spark's shuffle as Arrow blobs.

Spark's own way to bring each user's rows together (``frames.combine``: ``repartition`` by
user, ``groupBy`` with ``collect_list``, then Arrow for the Python workers) is JVM work for
every row, twice over: decoding Parquet into rows and writing them into the shuffle, then
reading them back, sorting them by user (``collect_list`` sorts past 128 users a task) and
turning the lists into Arrow. On 200M rows with two cores the JVM spent 250 s of CPU on it
against the Python scoring's 130 s (Spark's event log). Here Python tasks read the files'
row groups with pyarrow (``read_pack``), cut them by a hash of the user into one Arrow IPC
stream per partition of users, and the shuffle moves those streams, one row each, to a Python
task per partition (``unpack``) that scores its complete users. Nothing here imports pyspark
but ``shuffle_keys``, which asks Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from rankeval.errors import InputError, OptionError
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.spark.worker import KEY, Layout

TARGET, BLOB = "_t", "_b"  # a blob's shuffle key (lands it in its partition), the blob
_FIELDS: list[pa.Field] = [pa.field(TARGET, pa.int64()), pa.field(BLOB, pa.binary())]
SCHEMA = pa.schema(_FIELDS)
# Rows read and cut at once: a unit's blobs are tens of thousands of rows each on tens of
# partitions, and one unit's batch of blobs stays far below Arrow's 2 GiB per binary array.
UNIT_ROWS = 2_000_000
PACK_BYTES = 512 << 20


@dataclass(frozen=True)
class Units:
    """The inputs' files cut into units of whole row groups of about ``UNIT_ROWS`` rows,
    each read and cut by user in one task."""

    uri: tuple[str, ...]  # each input's location, for its filesystem
    # (input, file, row groups, rows of the input before it: its input order)
    units: tuple[tuple[int, str, tuple[int, ...], int], ...]


def find_units(paths: list[str], wanted: list[set[str]]) -> Units | None:
    """The units of every input, None when one is not a plain Parquet dataset holding the
    ``wanted`` columns in its files (Hive partition columns are Spark's alone): Spark then
    reads it."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from rankeval.spark.buckets import filesystem

    units = []
    for side, path in enumerate(paths):
        try:
            fs, root = filesystem(path)
            data = ds.dataset(root, format="parquet", filesystem=fs, partitioning=None)
        except (OSError, pa.ArrowInvalid, OptionError):  # s3a://, no libhdfs: Spark reads it
            return None
        if not wanted[side] <= set(data.schema.names):
            return None
        seen = 0
        for file in sorted(data.files):  # the input order: files by name, as Spark lists
            try:
                meta = pq.ParquetFile(file, filesystem=fs).metadata
            except (OSError, pa.ArrowInvalid) as exc:  # as the local engine says it
                raise InputError(file, f"not a readable Parquet file ({exc})") from None
            groups: list[int] = []
            rows = 0
            for g in range(meta.num_row_groups):
                groups.append(g)
                rows += meta.row_group(g).num_rows
                if rows >= UNIT_ROWS or g == meta.num_row_groups - 1:
                    units.append((side, file, tuple(groups), seen))
                    seen += rows
                    groups, rows = [], 0
    return Units(tuple(paths), tuple(units))


def read_pack(batches: Iterable[pa.RecordBatch], units: Units, layout: Layout, key_text: bool,
              ordered: bool, targets: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function before the shuffle: for each unit this task was given (the
    rows of ``batches`` hold their indices), its rows with the combined layout's columns,
    as one blob per partition of users they fall in (``_blobs``)."""
    import pyarrow.parquet as pq

    from rankeval.spark.buckets import combined, filesystem

    systems = [filesystem(uri)[0] for uri in units.uri]
    for batch in batches:
        for index in map(int, batch.column(0).to_numpy()):
            side, file, groups, seen = units.units[index]
            wanted = sorted({name for _, name in layout.sides[side].values()})
            # in pieces of UNIT_ROWS rows: a file of one huge row group is one unit
            reader = pq.ParquetFile(file, filesystem=systems[side])
            for piece in reader.iter_batches(UNIT_ROWS, list(groups), wanted):
                rows = combined(pa.Table.from_batches([piece]), side, layout, key_text,
                                seen if ordered else None)
                seen += rows.num_rows
                # and of at most PACK_BYTES: a batch of blobs has 32-bit offsets
                step = max(1, rows.num_rows * PACK_BYTES // max(rows.nbytes, 1))
                for at in range(0, rows.num_rows, step):
                    part = rows.slice(at, step)
                    yield _blobs(part, partition_of(part.column(KEY), len(targets)), targets)


def partition_of(key: pa.ChunkedArray, parts: int) -> np.ndarray:
    """Each row's partition of users: integers mixed by a multiplicative hash, text by
    SipHash over its distinct values (``ray.exchange.partition_of``); every input's key
    column has one type (``describe``), so a user lands in one partition."""
    if pa.types.is_integer(key.type):
        x = to_numpy(fill_null(key, 0).combine_chunks()).astype(np.uint64)
        x *= np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits are mixed
        x >>= np.uint64(32)
        return (x % np.uint64(parts)).astype(np.int64)
    from rankeval.ray.exchange import partition_of as of_text

    return of_text(key, parts)


def _blobs(table: pa.Table, part: np.ndarray, targets: np.ndarray) -> pa.RecordBatch:
    """``table``'s rows as one Arrow IPC stream per partition in ``part`` (the rows in their
    order), each keyed by ``targets[partition]``."""
    # a stable sort keeps each partition's rows in input order; 16-bit keys sort by radix
    keys = part.astype(np.int16) if len(targets) <= np.iinfo(np.int16).max else part
    order = np.argsort(keys, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(len(targets) + 1))
    rows = table.take(from_numpy(order))
    sink = pa.BufferOutputStream()
    ends, kept = [0], []
    for p in np.flatnonzero(np.diff(bounds)):
        with pa.ipc.new_stream(sink, rows.schema) as writer:
            writer.write_table(rows.slice(bounds[p], bounds[p + 1] - bounds[p]))
        ends.append(sink.tell())
        kept.append(targets[p])
    offsets = pa.py_buffer(np.asarray(ends, np.int32).tobytes())
    blobs = pa.Array.from_buffers(pa.binary(), len(kept), [None, offsets, sink.getvalue()])
    return pa.RecordBatch.from_arrays([pa.array(np.asarray(kept, np.int64)), blobs],
                                      schema=SCHEMA)


def unpacked(batches: Iterable[pa.RecordBatch], layout: Layout) -> list[pa.RecordBatch]:
    """The rows of one partition's blobs (complete users, from every input), with every
    input's columns (null where a row is another input's)."""
    tables = [pa.Table.from_batches([b]) for batch in batches for blob in batch.column(1)
              for b in pa.ipc.open_stream(blob.as_buffer())]
    if not tables:
        return []
    rows = pa.concat_tables(tables, promote_options="permissive")
    for roles in layout.sides:  # an input without rows here: its columns, empty
        for inner, _ in roles.values():
            if inner not in rows.column_names:
                rows = rows.append_column(inner, pa.nulls(rows.num_rows))
    return rows.to_batches()


def shuffle_keys(spark, parts: int) -> np.ndarray:
    """For each partition p < ``parts``, a long that Spark's hash partitioning into ``parts``
    sends to p (a tiny job: Spark's own hash, whatever its version computes)."""
    from pyspark.sql import functions as F

    found: dict[int, int] = {}
    span, start = 16 * parts, 0
    while len(found) < parts:
        rows = (spark.range(start, start + span)
                .select("id", F.expr(f"pmod(hash(id), {parts})").alias("p"))
                .groupBy("p").agg(F.min("id").alias("id")).collect())
        for p, value in rows:
            found.setdefault(int(p), int(value))
        start += span
    return np.array([found[p] for p in range(parts)], np.int64)
