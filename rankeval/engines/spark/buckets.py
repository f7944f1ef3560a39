"""Inputs already partitioned by user (``partitioned_by``, ``--spark-partitioned-by``): Parquet
datasets written in Hive-style directories by a column that puts each user in one value
(``bucket=0/``, ``bucket=1/``, ...; e.g. ``df.withColumn("bucket", pmod(hash("user_id"), 64))
.write.partitionBy("bucket")``). The rows of one value of every input are read together in
one Spark task with pyarrow, so that no row is shuffled between machines: Spark schedules
the tasks, pyarrow reads the files (local paths, s3://, gs://, hdfs:// through pyarrow's
filesystems). The claim is checked: a user found under two values is an error."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyarrow import fs as pafs

from rankeval.engines.distributed.chunks import KEY, SEQ, SIDE, USER, Layout, output_schema
from rankeval.engines.spark.worker import run
from rankeval.errors import InputError, OptionError
from rankeval.settings import Settings

KIND_USERS = 2  # output rows naming a partition value's users (the driver's check)


@dataclass(frozen=True)
class Buckets:
    """Per partition value, the files of each input (predictions, truth[, train])."""

    uri: tuple[str, ...]  # each input's location, for its filesystem
    values: tuple[str, ...]
    files: tuple[tuple[tuple[str, ...], ...], ...]  # value -> input -> files


def find(paths: list[str], column: str) -> Buckets:
    """The partition values of ``column`` under every input path and their files; every
    value of the predictions must be one of the truth's (users without truth rows are
    allowed: their value then holds predictions only)."""
    found: list[dict[str, list[str]]] = []
    for path in paths:
        fs, root = filesystem(path)
        try:
            data = ds.dataset(root, format="parquet", partitioning="hive", filesystem=fs)
        except (OSError, pa.ArrowInvalid) as exc:
            raise InputError(path, f"cannot list it as a Parquet dataset: {exc}") from None
        by_value: dict[str, list[str]] = {}
        for fragment in data.get_fragments():
            keys = ds.get_partition_keys(fragment.partition_expression)
            if column not in keys:
                raise InputError(path, f"{fragment.path} is not under a {column}=VALUE "
                                 f"directory: the inputs must all be partitioned by {column}")
            by_value.setdefault(str(keys[column]), []).append(fragment.path)
        if not by_value:
            raise InputError(path, "no Parquet files")
        found.append(by_value)
    values = sorted(set().union(*found))
    files = tuple(tuple(tuple(sorted(f.get(v, []))) for f in found) for v in values)
    return Buckets(tuple(paths), tuple(values), files)


def filesystem(path: str):
    """(filesystem, path within it) of a local path or a URI pyarrow knows."""
    if "://" not in path:
        return pafs.LocalFileSystem(), os.path.abspath(path)
    if path.startswith(("s3a://", "s3n://")):
        raise OptionError(f"{path}: partitioned inputs are read by pyarrow, which knows s3:// "
                          "but not Hadoop's s3a://; write the path as s3://")
    return pafs.FileSystem.from_uri(path)


def run_buckets(batches: Iterable[pa.RecordBatch], buckets: Buckets, layout: Layout,
                settings: Settings, key_text: bool, ordered: bool) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function: for every partition value this task was given (the rows of
    ``batches`` hold their indices), its rows of every input scored by ``worker.run`` (they
    are complete users), then one row per user seen (kind ``KIND_USERS``, the value in the
    partial column) for the driver's check that no user is under two values."""
    schema = output_schema(settings, "sample" in layout.preds)
    systems = [filesystem(uri)[0] for uri in buckets.uri]
    for batch in batches:
        for index in map(int, batch.column(0).to_numpy()):
            tables, seq = [], 0
            for side, files in enumerate(buckets.files[index]):
                wanted = sorted({name for _, name in layout.sides[side].values()})
                for path in files:
                    table = pq.read_table(path, filesystem=systems[side], columns=wanted,
                                          partitioning=None)
                    tables.append(combined(table, side, layout, key_text,
                                            seq if ordered else None))
                    seq += table.num_rows
            if not tables:
                continue
            rows = layout.gathered(tables)
            yield from run(rows.to_batches(), layout, settings, flat=True)
            yield _users(rows.column(KEY), buckets.values[index], schema)


def _users(key: pa.ChunkedArray, value: str, schema: pa.Schema) -> pa.RecordBatch:
    ids = pc.unique(key.cast(pa.string()).combine_chunks())
    n = len(ids)
    columns: list[pa.Array] = [pa.array(np.full(n, KIND_USERS, np.int8)), ids]
    columns += [pa.nulls(n, f.type) for f in list(schema)[2:-1]]
    columns.append(pa.array([value.encode()] * n, pa.binary()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def combined(table: pa.Table, side: int, layout: Layout, key_text: bool,
              seq: int | None) -> pa.Table:
    """One input's rows with the combined frame's columns (``frames.combine``); ``seq``:
    the bucket's rows read before these, when the input order decides."""
    columns: list[Any] = []
    names = []
    for inner, name in layout.sides[side].values():
        col = table.column(name)
        columns.append(col.cast(pa.string()) if inner == KEY and key_text else col)
        names.append(inner)
    columns.append(pa.array(np.full(table.num_rows, side, np.int8)))
    names.append(SIDE)
    if seq is not None:
        columns.append(pa.array(np.arange(seq, seq + table.num_rows, dtype=np.int64)))
        names.append(SEQ)
    return pa.table(columns, names=names)


def check_users(frame) -> None:
    """A user under two partition values: the inputs are not partitioned by user, and the
    user's rows were scored apart. The first few, named."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    twice = (frame.filter(F.col("kind") == KIND_USERS).groupBy(USER)
             .agg(F.collect_set("partial").alias("values")).filter(F.size("values") > 1)
             .limit(5).collect())
    if twice:
        shown = ", ".join(f"{r[USER]} ({' and '.join(sorted(v.decode() for v in r['values']))})"
                          for r in twice)
        raise InputError("partitioned inputs", f"users under more than one partition value, "
                         f"e.g. {shown}: each user's rows must all be under one value")
