"""Chunks of complete users, as both cluster engines score them in their tasks (Spark's
executors, ``engines.spark.worker``; Ray's tasks, ``engines.ray.exchange``): the combined
layout of the inputs' columns (``Layout``), the output schema of per-user rows and partials,
and ``score_chunk``, which loads and checks a chunk with the local loaders and scores it with
``engine.evaluate_partition``. Nothing here imports pyspark or ray.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.items import ItemStats
from rankeval.engines.partial import Partial
from rankeval.engines.partition import Grades, evaluate_partition, grades_of
from rankeval.engines.sampled import sample_columns
from rankeval.errors import InputError, collecting
from rankeval.io.arrow import nan_as_null
from rankeval.io.extras import Extras
from rankeval.io.frames import MemoryTable
from rankeval.io.load import Predictions, Train, Truth, load_predictions, load_train, load_truth
from rankeval.io.readers import Source
from rankeval.registry import CORPUS, REGISTRY
from rankeval.settings import Settings

KEY, SIDE, SEQ = "_k", "_s", "_q"  # user id, input (PREDS, TRUTH, TRAIN), input order
ROWS = "_rows"  # a user's rows, as a list
PREDS, TRUTH, TRAIN = 0, 1, 2
USER = "user_id"  # the per-user output's id column, as in the local per-user table
CHUNK_ROWS = 2_000_000  # rows scored at once: bounded memory per task, few Python calls


@dataclass(frozen=True)
class Layout:
    """How the combined frame's columns map back to each input's own columns."""

    labels: tuple[str, ...]  # predictions, truth[, train] (for messages)
    formats: tuple[str, ...]
    # Per side: role -> (column in the combined frame, column name in the input)
    sides: tuple[dict[str, tuple[str, str]], ...]
    chunk_rows: int = CHUNK_ROWS
    stats: ItemStats | None = None  # over the whole inputs, when a metric needs them

    @property
    def preds(self) -> dict[str, tuple[str, str]]:
        return self.sides[PREDS]

    @property
    def truth(self) -> dict[str, tuple[str, str]]:
        return self.sides[TRUTH]

    def gathered(self, tables: list[pa.Table]) -> pa.Table:
        """Tables of combined rows (from different inputs, read or shipped apart) as one, with
        every input's columns: null where an input has no rows among them."""
        rows = pa.concat_tables(tables, promote_options="permissive")
        for roles in self.sides:
            for inner, _ in roles.values():
                if inner not in rows.column_names:
                    rows = rows.append_column(inner, pa.nulls(rows.num_rows))
        return rows

    def table(self, data: pa.Table, side: int) -> pa.Table:
        """One side's rows of a chunk, with the input's own column names."""
        roles = self.sides[side]
        # pyarrow-stubs: equal takes only Arrow scalars; pyarrow converts a Python number
        rows = data.filter(pc.equal(data.column(SIDE), side))  # type: ignore[call-overload]
        return pa.table([rows.column(inner) for inner, _ in roles.values()],
                        names=[name for _, name in roles.values()])


def output_schema(settings: Settings, stochastic: bool = False) -> pa.Schema:
    """kind, user, one double per per-user metric (a stochastic run: then its number of
    samples and each metric's sd over them, as locally), the pickled partial."""
    specs = per_user_specs(settings)
    metrics: list[pa.Field] = [pa.field(str(s), pa.float64()) for s in specs]
    if stochastic:
        metrics += [pa.field("samples", pa.int64()),
                    *(pa.field(f"{s} sd", pa.float64()) for s in specs)]
    fields: list[pa.Field] = [pa.field("kind", pa.int8()), pa.field(USER, pa.string()),
                              *metrics, pa.field("partial", pa.binary())]
    return pa.schema(fields)


def extra_columns(schema: pa.Schema, settings: Settings) -> tuple[str, ...]:
    """The per-user columns after the metrics (a stochastic run's samples and sds)."""
    return tuple(schema.names[2 + len(per_user_specs(settings)):-1])


def per_user_specs(settings: Settings) -> list:
    return [s for s in settings.specs if REGISTRY[s.name].scope != CORPUS]


@dataclass(frozen=True)
class ChunkResult:
    """One chunk's contribution: the partial (None when the chunk could not be read; with
    errors it counts what ``validate`` counts), the errors (as plain fields), rows per input
    and the truth's grades (``partition.Grades``: with its relevance column's name, which the
    driver's notices need)."""

    partial: Partial | None
    errors: list[dict]
    rows: tuple[int, ...]  # per input
    grades: Grades | None
    # up to two of the chunk's sample values: a run whose sample column holds one value in
    # all is deterministic (the driver strips the chunks' samples), as locally
    samples: tuple[str, ...] = ()


def score_chunk(data: pa.Table, layout: Layout, settings: Settings) -> ChunkResult:
    """Load, check and score one chunk with the local engine, collecting input errors."""
    if SEQ in data.column_names:  # the input order decides: each user's rows in that order
        data = data.take(pc.sort_indices(data.column(SEQ)))
    tables = [layout.table(data, side) for side in range(len(layout.sides))]
    partial = grades = None
    samples: tuple[str, ...] = ()
    with collecting() as found:
        try:
            preds, truth = _load(tables[PREDS], layout, PREDS), _load(tables[TRUTH], layout, TRUTH)
            assert isinstance(preds, Predictions) and isinstance(truth, Truth)  # by side
            if preds.sample is not None:
                samples = tuple(map(str, pc.unique(preds.sample)[:2].to_pylist()))
            extras = None
            if len(tables) > TRAIN:
                train = _load(tables[TRAIN], layout, TRAIN)
                assert isinstance(train, Train)
                extras = Extras(train=train)
            grades = grades_of(truth)
            partial = evaluate_partition(preds, truth, settings, extras, layout.stats)
        except InputError as exc:  # the chunk cannot be read further
            found.append(exc)
    errors = [_error_fields(e, tables, layout) for e in found]
    return ChunkResult(partial, errors, tuple(t.num_rows for t in tables), grades, samples)


_LOADERS: tuple[Callable[..., Any], ...] = (load_predictions, load_truth, load_train)  # by side


def _load(table: pa.Table, layout: Layout, side: int) -> Predictions | Truth | Train:
    """One input's rows of a chunk, loaded and checked as a local file of them would be. An
    input with no rows in the chunk is an empty one of its kind: the users only in the other
    inputs still count."""
    source = Source(layout.labels[side], layout.formats[side], table.num_rows)
    names = {role: name for role, (_, name) in layout.sides[side].items()}
    if not table.num_rows:
        return _empty(side, names, source)
    loaded = _LOADERS[side](MemoryTable(table, layout.labels[side]),
                            {f"{role}_col": name for role, name in names.items()},
                            **({"one_sample": True} if "sample" in names else {}))
    return dataclasses.replace(loaded, source=source)


def _empty(side: int, names: dict[str, str], source: Source) -> Predictions | Truth | Train:
    ids = pa.chunked_array([], pa.string())
    if side == PREDS:
        return Predictions(ids, ids, np.zeros(0, np.int64) if "rank" in names else None,
                           np.zeros(0) if "score" in names else None, source, names,
                           ids if "sample" in names else None)
    if side == TRUTH:
        return Truth(ids, ids, np.zeros(0), source, names)
    return Train(ids, ids, np.zeros(0) if "count" in names else None, source, names)


def _error_fields(error: InputError, tables, layout: Layout) -> dict:
    """An input error as plain fields, its example rows named by their user: a row number
    within a chunk means nothing to the reader."""
    fields: dict[str, Any] = {
        "path": error.path, "problem": error.problem, "column": error.column,
        "count": error.count, "hint": error.hint, "unit": error.unit, "examples": []}
    side = layout.labels.index(error.path) if error.path in layout.labels else PREDS
    if error.examples and all(isinstance(row, int) for row, _ in error.examples):
        user = layout.sides[side]["user"][1]
        users = tables[side].column(user)
        fields["unit"] = "row of user"
        fields["examples"] = [(_user_text(users, row), value) for row, value in error.examples
                              if isinstance(row, int)]  # all are (checked above)
    else:
        fields["examples"] = list(error.examples)
    return fields


def _user_text(users: pa.ChunkedArray, row: int) -> str:
    value = users[int(row) - 1].as_py()
    return "" if value is None else str(value)


def per_user_batch(partial: Partial, schema: pa.Schema, settings: Settings) -> pa.RecordBatch:
    """A chunk's per-user rows (kind 0) in ``schema``."""
    n = len(partial.users)
    columns: list[pa.Array] = [pa.array(np.zeros(n, np.int8)), partial.users.cast(pa.string())]
    # NaN (a user the metric cannot score) as null: the per-user dataset's empty cell
    specs = per_user_specs(settings)
    columns += [nan_as_null(partial.values[s]) for s in specs]
    if extra_columns(schema, settings):  # every chunk of a stochastic run is one (one_sample)
        extra = sample_columns(partial)
        columns += [pa.array(extra["samples"], pa.int64()),
                    *(nan_as_null(extra[f"{s} sd"]) for s in specs)]
    columns.append(pa.nulls(n, pa.binary()))
    return pa.RecordBatch.from_arrays(columns, schema=schema)




def scored(data: pa.Table, layout: Layout, settings: Settings, schema: pa.Schema
           ) -> tuple[pa.RecordBatch | None, ChunkResult]:
    """One chunk scored (``score_chunk``): its per-user rows in ``schema`` (None for a chunk
    with errors or without users), and its result without them (``stripped``)."""
    part = score_chunk(data, layout, settings)
    rows = None
    if part.partial is not None and not part.errors and len(part.partial.users):
        rows = per_user_batch(part.partial, schema, settings)
    return rows, stripped(part)


def stripped(part: ChunkResult) -> ChunkResult:
    """The chunk's result without the partial's per-user arrays (those went out as rows, or
    stay in the object store)."""
    if part.partial is None:
        return part
    partial = dataclasses.replace(part.partial, users=pa.array([], pa.string()),
                                  values={s: np.zeros(0) for s in part.partial.values},
                                  samples=None, spread={})  # sample_totals stay
    return dataclasses.replace(part, partial=partial)
