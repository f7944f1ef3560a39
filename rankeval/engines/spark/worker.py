"""What runs on Spark's executors: the local engine over chunks of complete users.

Spark hands ``run`` one partition as Arrow record batches of one row per user, the user's rows
of every input gathered in a list (by ``groupBy`` after repartitioning by user);
``complete_users`` flattens them into chunks of about ``CHUNK_ROWS`` rows of complete users
(Parquet inputs read by pyarrow, ``exchange``, and inputs already partitioned by user,
``buckets``, come flat: ``partition_chunks``). Each chunk is loaded and checked by the same
functions as a local file and scored by ``distributed.chunks.score_chunk`` (what Ray's tasks
run too). Out come per-user rows (kind 0) and one row per chunk (kind 1) holding its pickled
partial result: sums, counts, notices, errors. Nothing here imports pyspark.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Iterable, Iterator
from typing import cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.engines.distributed.chunks import (
    KEY,
    ROWS,
    ChunkResult,
    Layout,
    output_schema,
    scored,
)
from rankeval.engines.distributed.gold import FIELDS, partition_moments
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.settings import Settings

# pyspark warns about pandas >= 3 wherever it checks for pandas, mapInArrow included; the
# engine passes Arrow only. Set here, which the driver and every Python worker import.
warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                        category=FutureWarning)


def run(batches: Iterable[pa.RecordBatch], layout: Layout, settings: Settings, flat: bool = False
        ) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function: every chunk's per-user rows, then its partial. ``batches``:
    one row per user with the list of its rows (``frames.combine``), or, ``flat``, one row
    per input row of complete users (``buckets``)."""
    schema = output_schema(settings, "sample" in layout.preds)
    chunks = partition_chunks if flat else complete_users
    for chunk in chunks(batches, layout.chunk_rows):
        rows, part = scored(chunk, layout, settings, schema)
        if rows is not None:
            yield rows
        yield _summary(part, schema)


def gold_batches(batches: Iterable[pa.RecordBatch], gold: pa.Table, strata, metrics
                 ) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function of ``--gold``: a partition's moments
    (``distributed.gold.partition_moments``), as rows of ``FIELDS``."""
    tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
    if not tables:
        return
    rows = partition_moments(pa.concat_tables(tables), gold, strata, metrics)
    if rows:
        yield pa.RecordBatch.from_pylist([dict(zip(FIELDS, r, strict=True)) for r in rows],
                                         schema=_MOMENTS)


_MOMENTS = pa.schema([(f, pa.string()) for f in FIELDS[:3]] + [(FIELDS[3], pa.int64())]
                     + [(f, pa.float64()) for f in FIELDS[4:]])


def partition_chunks(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """A partition's rows (every one of its users complete: repartitioned by user) as
    tables of complete users of about ``rows`` rows each, each user's rows in their order."""
    tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
    if not tables:
        return
    data = pa.concat_tables(tables)
    del tables
    if data.num_rows <= rows:
        yield data
        return
    encoded = cast(pa.DictionaryArray, pc.dictionary_encode(data.column(KEY)).combine_chunks())
    user = to_numpy(encoded.indices)
    per_user = np.bincount(user)
    chunk = ((np.cumsum(per_user) - per_user) // rows)[user]  # by the user's first row
    # one filter per chunk: no sort, and each row copied once
    for c in range(int(chunk.max()) + 1):
        part = data.filter(from_numpy(chunk == c))
        if part.num_rows:
            yield part


def complete_users(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """Tables of at least ``rows`` rows (the last may be smaller), one row per input row,
    from batches of one row per user (``KEY`` and the list of its rows, ``ROWS``): every
    table holds all the rows of its users."""
    pending: list[pa.Table] = []
    n = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(_flat(batch))
        n += pending[-1].num_rows
        if n >= rows:
            yield pa.concat_tables(pending)
            pending, n = [], 0
    if pending:
        yield pa.concat_tables(pending)


def _flat(batch: pa.RecordBatch) -> pa.Table:
    """Users with their rows as lists -> one row per input row, the user repeated."""
    lists = batch.column(ROWS)
    values = pc.list_flatten(lists)
    users = batch.column(KEY).take(pc.list_parent_indices(lists))
    return pa.Table.from_arrays([users, *values.flatten()],
                                names=[KEY, *[f.name for f in values.type]])


def _summary(part: ChunkResult, schema: pa.Schema) -> pa.RecordBatch:
    """The chunk's result (its partial without the per-user arrays: those went out as
    rows), pickled in one row."""
    blob = pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
    columns: list[pa.Array] = [pa.array([1], pa.int8()), pa.nulls(1, pa.string())]
    columns += [pa.nulls(1, f.type) for f in list(schema)[2:-1]]
    columns.append(pa.array([blob], pa.binary()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)
