"""What runs in Ray's tasks: every input block split by a hash of its user ids, then each
partition of users scored whole by the local engine (``distributed.chunks.score_chunk``: the
same loaders, checks and kernels as a local run).

Ray Data's own shuffles (``repartition(keys=...)``, ``groupby``) cost seconds per job
(100,000 rows and a trivial function: 1.6-5 s with Ray 2.60 on two cores; its hash shuffles
start actors); plain tasks returning one table per partition (``num_returns``) cost
milliseconds. Nothing here imports ray: ``remote`` wraps
these functions when a job starts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.engines.distributed.chunks import (
    KEY,
    SIDE,
    ChunkResult,
    Layout,
    output_schema,
    scored,
)
from rankeval.engines.distributed.gold import partition_moments
from rankeval.engines.distributed.hashing import as_text, partition_of


@functools.cache
def remote(fn: Callable) -> Any:
    """``fn`` as a Ray remote function (made once per process)."""
    import ray  # optional dependency: rankeval[ray]

    return ray.remote(fn)


def moments(shared: tuple, table: pa.Table) -> list[tuple]:
    """``--gold``: one partition's moments (``distributed.gold.partition_moments``);
    ``shared``: the gold values, the strata and the metrics."""
    gold, strata, metrics = shared
    return partition_moments(table, gold, strata, metrics)


def split(side: int, columns: list[tuple[str, str]], user: str, parts: int, text_key: bool,
          *blocks: pa.Table) -> pa.Table | tuple[pa.Table, ...]:
    """Consecutive blocks of one input as ``parts`` tables, one per partition of users (a
    hash of the user id's text: every input's rows of a user meet, whatever the type of its
    id column), with the combined layout's columns: ``KEY`` (the user id; as text when the
    inputs' types differ), ``SIDE``, then the side's own. The rows keep their order (a stable
    sort): with the blocks in input order, each user's rows reach ``score`` in input order,
    which decides a ranking without rank or score."""
    table = pa.concat_tables([_combined(b, side, columns, user, text_key) for b in blocks],
                             promote_options="permissive")
    if parts == 1:
        return table
    text = as_text(table.column(KEY))
    part = partition_of(text, parts) if text is not None else np.zeros(len(table), np.int64)
    order = np.argsort(part, kind="stable")
    bounds = np.searchsorted(part[order], np.arange(parts + 1))
    # a copy per partition (take), not slices: a slice would carry the whole block's buffers
    return tuple(table.take(order[bounds[i]:bounds[i + 1]]) for i in range(parts))


def _combined(block: pa.Table, side: int, columns: list[tuple[str, str]], user: str,
              text_key: bool) -> pa.Table:
    """One block with the combined layout's columns."""
    users = block.column(user)
    text = as_text(users) if text_key else None
    arrays: list[Any] = [users if text is None else text,
                         pa.array(np.full(block.num_rows, side, np.int8))]
    names = [KEY, SIDE]
    for inner, name in columns:
        if inner != KEY:
            arrays.append(block.column(name))
            names.append(inner)
    return pa.table(arrays, names=names)


def score(shared: tuple[Layout, Any], *shards: pa.Table) -> tuple[pa.Table, ChunkResult | None]:
    """One partition of users (its shards from every input block): the per-user rows and the
    partial without them (None for a partition without rows)."""
    layout, settings = shared
    schema = output_schema(settings, "sample" in layout.preds)
    empty = pa.schema(list(schema)[1:-1]).empty_table()
    present = [s for s in shards if s.num_rows]
    if not present:
        return empty, None
    rows, part = scored(layout.gathered(present), layout, settings, schema)
    if rows is None:
        return empty, part
    return pa.Table.from_batches([rows]).select(empty.column_names), part


def items(block: pa.Table, column: str) -> pa.Array:
    """The distinct item ids of a block, as text (the item statistics' ids)."""
    text = as_text(block.column(column))
    if text is None:
        return pa.array([], pa.string())
    return pc.unique(text.combine_chunks()).drop_null()


def warm() -> None:
    """Imports, in a fresh worker while the driver starts reading: this module (numpy,
    pyarrow, the kernels) and Ray Data's readers, which the first tasks need."""
    import pyarrow.parquet  # noqa: F401  (import cost: paid here, before the first tasks)
    import ray.data  # noqa: F401  (optional dependency: rankeval[ray])
