"""What runs on Spark's executors: the local engine over chunks of complete users.

Spark hands ``run`` one partition as Arrow record batches, rows of both inputs together, sorted
by user; ``complete_users`` cuts them into chunks that never split a user (a user whose rows
run past a batch is carried into the next chunk). Each chunk is loaded and checked by the same
functions as a local file and scored by ``engine.evaluate_partition``. Out come per-user rows
(kind 0) and one row per chunk (kind 1) holding its pickled partial result: sums, counts,
notices, errors. Nothing here imports pyspark.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..arrow import from_numpy
from ..engine import Partial, evaluate_partition
from ..errors import InputError, collecting
from ..io.readers import MemoryTable, Source
from ..load import Predictions, Truth, load_predictions, load_truth
from ..registry import CORPUS, REGISTRY

KEY, SIDE, SEQ = "_k", "_s", "_q"  # user id as text, 0 predictions / 1 truth, input order
PREDS, TRUTH = 0, 1
USER = "user_id"  # the per-user output's id column, as in the local per-user table
CHUNK_ROWS = 2_000_000  # rows scored at once: bounded memory per task, few Python calls


@dataclass(frozen=True)
class Layout:
    """How the combined frame's columns map back to each input's own columns."""

    labels: tuple[str, str]  # predictions, truth (for messages)
    formats: tuple[str, str]
    # role -> (column in the combined frame, column name in the input), per side
    preds: dict[str, tuple[str, str]]
    truth: dict[str, tuple[str, str]]
    chunk_rows: int = CHUNK_ROWS

    def table(self, data: pa.Table, side: int) -> pa.Table:
        """One side's rows of a chunk, with the input's own column names."""
        roles = self.preds if side == PREDS else self.truth
        rows = data.filter(pc.equal(data.column(SIDE), side))
        return pa.table([rows.column(inner) for inner, _ in roles.values()],
                        names=[name for _, name in roles.values()])


def output_schema(settings) -> pa.Schema:
    """kind, user, one double per per-user metric, the pickled partial."""
    metrics = [pa.field(str(s), pa.float64()) for s in per_user_specs(settings)]
    return pa.schema([pa.field("kind", pa.int8()), pa.field(USER, pa.string()), *metrics,
                      pa.field("partial", pa.binary())])


def per_user_specs(settings) -> list:
    return [s for s in settings.specs if REGISTRY[s.name].scope != CORPUS]


def run(batches: Iterable[pa.RecordBatch], layout: Layout, settings
        ) -> Iterator[pa.RecordBatch]:
    """The mapInArrow function: every chunk's per-user rows, then its partial."""
    schema = output_schema(settings)
    for chunk in complete_users(batches, layout.chunk_rows):
        part = score_chunk(chunk, layout, settings)
        if part.partial is not None and not part.errors and len(part.partial.users):
            yield _per_user(part.partial, schema, settings)
        yield _summary(part, schema)


def complete_users(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """Tables of at least ``rows`` rows (the last may be smaller) from batches sorted by
    ``KEY``, each holding every row of its users."""
    pending: list[pa.RecordBatch] = []
    n = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        n += batch.num_rows
        if n < rows:
            continue
        table = pa.Table.from_batches(pending)
        cut = n - _last_user_rows(table.column(KEY))
        if cut == 0:  # one user so far: keep reading
            continue
        yield table.slice(0, cut)
        pending = table.slice(cut).to_batches()
        n -= cut
    if n:
        yield pa.Table.from_batches(pending)


def _last_user_rows(keys: pa.ChunkedArray) -> int:
    """How many rows at the end belong to the last row's user (keys sorted, nulls first)."""
    last = keys[len(keys) - 1]
    same = pc.is_null(keys) if not last.is_valid else pc.equal(keys, last)
    return int(pc.sum(same).as_py() or 0)


@dataclass(frozen=True)
class ChunkResult:
    """One chunk's contribution: the partial (None when the chunk could not be read; with
    errors it counts what ``validate`` counts), the errors (as plain fields), rows per input
    and the truth's relevance range."""

    partial: Partial | None
    errors: list[dict]
    rows: tuple[int, int]
    relevance: tuple[float, float] | None


def score_chunk(data: pa.Table, layout: Layout, settings) -> ChunkResult:
    """Load, check and score one chunk with the local engine, collecting input errors."""
    tables = layout.table(data, PREDS), layout.table(data, TRUTH)
    partial = relevance = None
    with collecting() as found:
        try:
            preds = _predictions(tables[0], layout)
            truth = _truth(tables[1], layout)
            if "relevance" in layout.truth and len(truth.relevance):
                relevance = (float(truth.relevance.min()), float(truth.relevance.max()))
            partial = evaluate_partition(preds, truth, settings)
        except InputError as exc:  # the chunk cannot be read further
            found.append(exc)
    errors = [_error_fields(e, tables, layout) for e in found]
    return ChunkResult(partial, errors,
                       (tables[0].num_rows, tables[1].num_rows), relevance)


def _names(roles: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {f"{role}_col": name for role, (_, name) in roles.items()}


def _predictions(table: pa.Table, layout: Layout) -> Predictions:
    source = Source(layout.labels[0], layout.formats[0], table.num_rows)
    names = {role: name for role, (_, name) in layout.preds.items()}
    if not table.num_rows:  # users only in the truth: still counted
        empty = pa.chunked_array([], pa.string())
        none = np.zeros(0, np.int64)
        return Predictions(empty, empty, none if "rank" in names else None,
                           none.astype(np.float64) if "score" in names else None, source, names)
    loaded = load_predictions(MemoryTable(table, layout.labels[0]), **_names(layout.preds))
    return dataclasses.replace(loaded, source=source)


def _truth(table: pa.Table, layout: Layout) -> Truth:
    source = Source(layout.labels[1], layout.formats[1], table.num_rows)
    names = {role: name for role, (_, name) in layout.truth.items()}
    if not table.num_rows:  # users only in the predictions
        empty = pa.chunked_array([], pa.string())
        return Truth(empty, empty, np.zeros(0), source, names)
    loaded = load_truth(MemoryTable(table, layout.labels[1]), **_names(layout.truth))
    return dataclasses.replace(loaded, source=source)


def _error_fields(error: InputError, tables, layout: Layout) -> dict:
    """An input error as plain fields, its example rows named by their user: a row number
    within a chunk means nothing to the reader."""
    fields = {"path": error.path, "problem": error.problem, "column": error.column,
              "count": error.count, "hint": error.hint, "unit": error.unit, "examples": []}
    side = 0 if error.path == layout.labels[0] else 1
    if error.examples and all(isinstance(row, int) for row, _ in error.examples):
        user = (layout.preds if side == PREDS else layout.truth)["user"][1]
        users = tables[side].column(user)
        fields["unit"] = "row of user"
        fields["examples"] = [(_user_text(users, row), value) for row, value in error.examples]
    else:
        fields["examples"] = list(error.examples)
    return fields


def _user_text(users: pa.ChunkedArray, row: int) -> str:
    value = users[int(row) - 1].as_py()
    return "" if value is None else str(value)


def _per_user(partial: Partial, schema: pa.Schema, settings) -> pa.RecordBatch:
    n = len(partial.users)
    columns = [pa.array(np.zeros(n, np.int8)), partial.users.cast(pa.string())]
    columns += [from_numpy(partial.values[s]) for s in per_user_specs(settings)]
    columns.append(pa.nulls(n, pa.binary()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _summary(part: ChunkResult, schema: pa.Schema) -> pa.RecordBatch:
    """The chunk's partial without its per-user arrays (those went out as rows)."""
    partial = part.partial
    if partial is not None:
        partial = dataclasses.replace(partial, users=pa.array([], pa.string()),
                                      values={s: np.zeros(0) for s in partial.values})
    blob = pickle.dumps(dataclasses.replace(part, partial=partial),
                        protocol=pickle.HIGHEST_PROTOCOL)
    columns = [pa.array([1], pa.int8()), pa.nulls(1, pa.string())]
    columns += [pa.nulls(1, pa.float64()) for _ in schema.names[2:-1]]
    columns.append(pa.array([blob], pa.binary()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)
