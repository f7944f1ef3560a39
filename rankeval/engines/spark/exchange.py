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
task per partition (``unpacked``) that scores its complete users. The files are the ones
Spark lists for the input (``DataFrame.inputFiles``), read through pyarrow's filesystems.
Nothing here imports pyspark but ``shuffle_keys``, which asks Spark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from rankeval.engines.distributed.chunks import KEY, Layout
from rankeval.engines.distributed.hashing import partition_of as text_partition_of
from rankeval.engines.spark.buckets import combined
from rankeval.errors import InputError
from rankeval.io.arrow import fill_null, from_numpy, to_numpy

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

    # (input, file URI, row groups, rows of the input before it: its input order)
    units: tuple[tuple[int, str, tuple[int, ...], int], ...]
    bytes: int  # the rows' uncompressed size (Parquet's count), for the partitions


def find_units(frames: list, wanted: list[set[str]], user: list[str]) -> Units | None:
    """The units of the files behind each of ``frames`` (Spark's own listing, so the files
    Spark would read: its default filesystem, no hidden, empty or half-copied files), in
    name order; None, for Spark to read them, when a file is on a filesystem pyarrow does not
    reach (``s3a://``) or lacks a ``wanted`` column (a Hive partition directory), or an
    input's ``user`` column is a number in one file and text in another."""
    files: list[tuple[int, str]] = []
    for side, df in enumerate(frames):
        try:
            files += [(side, uri) for uri in sorted(df.inputFiles())]
        except Exception:  # a plan Spark cannot list the files of
            return None
    try:  # footers on a pool of threads: on object stores, each is a request
        with ThreadPoolExecutor(16) as pool:
            footers = list(pool.map(_footer, [uri for _, uri in files]))
    except _Unreachable:
        return None
    units, seen, size = [], [0] * len(frames), 0
    kinds: list[set[str]] = [set() for _ in frames]
    for (side, uri), meta in zip(files, footers, strict=True):
        if meta is None:  # an empty file, which Spark skips too
            continue
        schema = meta.schema.to_arrow_schema()
        if not wanted[side] <= set(schema.names):
            return None
        kinds[side].add(_kind(schema.field(user[side]).type))
        if len(kinds[side]) > 1:
            return None
        groups: list[int] = []
        rows = 0
        for g in range(meta.num_row_groups):
            groups.append(g)
            rows += meta.row_group(g).num_rows
            size += meta.row_group(g).total_byte_size
            if rows >= UNIT_ROWS or g == meta.num_row_groups - 1:
                units.append((side, uri, tuple(groups), seen[side]))
                seen[side] += rows
                groups, rows = [], 0
    return Units(tuple(units), size)


class _Unreachable(Exception):
    """A file on a filesystem pyarrow does not reach here."""


def _footer(uri: str):
    """A file's Parquet metadata (None for an empty file)."""
    try:
        fs, path = open_uri(uri)
        if fs.get_file_info(path).size == 0:
            return None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _Unreachable(uri) from exc
    try:
        return pq.ParquetFile(path, filesystem=fs).metadata
    except (OSError, pa.ArrowException) as exc:  # as the local engine says it
        raise InputError(path, f"not a readable Parquet file ({exc})") from None


def _kind(kind: pa.DataType) -> str:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return "number" if pa.types.is_integer(kind) else "text"


def open_uri(uri: str):
    """(pyarrow filesystem, path) of a file URI as Spark lists it (``file:/tmp/a%20b``,
    ``hdfs://host/p``, ``s3://...``); Hadoop's ``s3a://`` and ``s3n://`` are not pyarrow's."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return pafs.LocalFileSystem(), unquote(parsed.path)
    if parsed.scheme in ("s3a", "s3n"):
        raise ValueError(f"{parsed.scheme}:// is Hadoop's")
    return pafs.FileSystem.from_uri(uri)


def read_pack(batches: Iterable[pa.RecordBatch], units: Units, layout: Layout, key_text: bool,
              ordered: bool, targets: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function before the shuffle: for each unit this task was given (the
    rows of ``batches`` hold their indices), its rows with the combined layout's columns,
    as one blob per partition of users they fall in (``_blobs``)."""
    for batch in batches:
        for index in map(int, batch.column(0).to_numpy()):
            side, uri, groups, seen = units.units[index]
            fs, path = open_uri(uri)
            wanted = sorted({name for _, name in layout.sides[side].values()})
            # in pieces of UNIT_ROWS rows: a file of one huge row group is one unit
            reader = pq.ParquetFile(path, filesystem=fs)
            for piece in reader.iter_batches(UNIT_ROWS, list(groups), wanted):
                rows = combined(_decoded(pa.Table.from_batches([piece])), side, layout,
                                key_text, seen if ordered else None)
                seen += rows.num_rows
                # and of at most PACK_BYTES: a batch of blobs has 32-bit offsets
                step = max(1, rows.num_rows * PACK_BYTES // max(rows.nbytes, 1))
                for at in range(0, rows.num_rows, step):
                    part = rows.slice(at, step)
                    yield _blobs(part, partition_of(part.column(KEY), len(targets)), targets)


def _decoded(table: pa.Table) -> pa.Table:
    """Dictionary columns as their values (a pandas category written to Parquet): every
    blob would carry the whole dictionary, and a user column of dictionary type would not
    meet another input's text."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name,
                                     table.column(i).cast(field.type.value_type))
    return table


def partition_of(key: pa.ChunkedArray, parts: int) -> np.ndarray:
    """Each row's partition of users: integers mixed by a multiplicative hash, text by
    SipHash over its distinct values (``distributed.hashing.partition_of``); every input's key
    column has one type (``describe``), so a user lands in one partition."""
    if pa.types.is_integer(key.type):
        x = to_numpy(fill_null(key, 0).combine_chunks()).astype(np.uint64)
        x *= np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits are mixed
        x >>= np.uint64(32)
        return (x % np.uint64(parts)).astype(np.int64)
    return text_partition_of(key, parts)


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
    return layout.gathered(tables).to_batches() if tables else []


def shuffle_keys(spark, parts: int) -> np.ndarray:
    """For each partition p < ``parts``, a long that Spark's hash partitioning into ``parts``
    sends to p (a tiny job: Spark's own hash, whatever its version computes)."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

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
