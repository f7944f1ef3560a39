"""The Spark engine's driver: the inputs as DataFrames (read by Spark, or given), the job that
scores them (``worker.run`` in ``mapInArrow``; Parquet files by path through ``exchange``,
inputs partitioned by user through ``buckets``), the merge of every chunk's partial into an
``Evaluation``, and ``validate_frames``."""

from __future__ import annotations

import dataclasses
import os
import pickle
from collections.abc import Mapping
from typing import Any

from rankeval.conventions import FILE_ORDER_TIES
from rankeval.engines.distributed.chunks import (
    CHUNK_ROWS,
    ChunkResult,
    extra_columns,
    output_schema,
)
from rankeval.engines.distributed.gold import Parts, added
from rankeval.engines.distributed.merge import Side, counted, deterministic, merged
from rankeval.engines.finish import finish
from rankeval.engines.spark.buckets import check_users, find, run_buckets
from rankeval.engines.spark.exchange import (
    SCHEMA,
    find_units,
    read_pack,
    shuffle_keys,
    unpacked,
)
from rankeval.engines.spark.frames import combine, describe, is_frame, read, spark_format
from rankeval.engines.spark.items import SparkExtras, item_stats
from rankeval.engines.spark.result import SparkValues
from rankeval.engines.spark.session import job_error, session
from rankeval.engines.spark.worker import gold_batches, run
from rankeval.engines.validation import Validation
from rankeval.errors import InputError, OptionError, RankevalError
from rankeval.io.columns import resolve_role
from rankeval.io.extras import Extras, load_on_driver
from rankeval.io.readers import Source
from rankeval.params import tie_rules
from rankeval.results.evaluation import Evaluation
from rankeval.settings import Settings


def extra_frames(given: Mapping[str, Any], columns, spark: Any = None,
                 reading: dict[str, Any] | None = None) -> SparkExtras:
    """``given``'s ``train`` and ``catalog`` read by Spark (or given as DataFrames); its
    ``item_features``, ``item_groups`` and ``propensity`` loaded here (sent to every task
    with the item statistics). Each with its ``NAME_format``."""
    found = {}
    for role in ("train", "catalog"):
        if given.get(role) is not None:
            found[role] = _frame(given[role], role, given.get(f"{role}_format"),
                                 f"{role}_format", spark, reading)
    return SparkExtras(**found, **load_on_driver(given, columns, reading))


def input_frames(predictions: Any, truth: Any, preds_format: str | None = None,
           truth_format: str | None = None, spark: Any = None,
           reading: dict[str, Any] | None = None):
    """Both inputs as (DataFrame, label, format): paths are read by Spark."""
    return [_frame(predictions, "predictions", preds_format, "preds_format", spark, reading),
            _frame(truth, "truth", truth_format, "truth_format", spark, reading)]


def _frame(data: Any, role: str, fmt: str | None, flag: str, spark: Any, reading):
    if is_frame(data):
        return data, role, "spark"
    if not isinstance(data, str | os.PathLike):
        raise RankevalError(f"{role}: expected a Spark DataFrame or a path, got "
                            f"{type(data).__name__} (rankeval.evaluate takes local data)")
    path = os.fspath(data)
    kind = spark_format(path, fmt, f"{{opt:{flag}}}")
    return read(spark or session(), path, kind, role, reading), path, kind


def evaluate_frames(preds, truth, settings: Settings, columns: dict[str, str | None],
                    partitions: int | None = None, chunk_rows: int = CHUNK_ROWS,
                    extras: SparkExtras | None = None,
                    partitioned_by: str | None = None) -> Evaluation:
    """Score two (DataFrame, label, format) inputs; raises the first input error found.
    ``partitioned_by``: the inputs are Parquet datasets partitioned by user in that
    column's directories (``buckets``): no shuffle."""
    extras = extras or SparkExtras()
    stats, summaries = item_stats(preds, extras, settings, columns)
    results, scored, _ = _scored(preds, truth, settings, columns, partitions, chunk_rows,
                                 extras.train, stats, partitioned_by)
    return _finish(results, scored, settings, (preds[1], truth[1]), (preds[2], truth[2]),
                   extras, stats, summaries)


def _scored(preds, truth, settings: Settings, columns, partitions, chunk_rows, train=None,
            stats=None, partitioned_by: str | None = None):
    """(every chunk's result, the cached per-user frame, the layout)."""
    from pyspark import StorageLevel  # optional dependency: rankeval[spark]
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    inputs = [preds, truth, *([train] if train is not None else [])]
    ordered = _file_order(settings, columns, preds[0])
    if partitioned_by:
        out, layout = _by_partition_value(inputs, columns, partitioned_by, ordered, settings,
                                          chunk_rows, stats)
    elif (found := _by_files(inputs, columns, partitions, ordered, settings, chunk_rows,
                             stats)) is not None:
        out, layout = found
    else:
        both, layout = combine(inputs, columns, partitions or _partitions(preds[0], truth[0]),
                               ordered=ordered)
        layout = dataclasses.replace(layout, chunk_rows=chunk_rows, stats=stats)
        out = both.mapInArrow(lambda batches: run(batches, layout, settings), _spark_schema(
            output_schema(settings, "sample" in layout.preds)))
    schema = output_schema(settings, "sample" in layout.preds)
    out = out.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rows = out.filter(F.col("kind") == 1).select("partial").collect()
        if partitioned_by:
            check_users(out)
    except InputError:
        out.unpersist()
        raise
    except Exception as exc:  # a task failed: Spark's error, on one line
        out.unpersist()
        raise RankevalError(f"the Spark job failed: {job_error(exc)}") from None
    results = [pickle.loads(bytes(r[0])) for r in rows]
    per_user = out.filter(F.col("kind") == 0).select(*[f"`{n}`" for n in schema.names[1:-1]])
    extra = extra_columns(schema, settings)
    if extra and (fixed := deterministic(results)) is not None:
        results, per_user, extra = fixed, per_user.drop(*extra), ()
    return results, _Cached(per_user, out, extra), layout


def gold_parts(store: SparkValues, gold, strata, metrics) -> Parts:
    """``--gold``: each partition of the machine values (the cached DataFrame) gives its
    moments in a ``mapInArrow`` task (``distributed.gold``: the gold values and strata go
    with the function), a few rows collected and added up here."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    wanted = list(metrics)
    frame = store.frame().select(F.col("user_id"), *[F.col(f"`{m}`") for m in wanted])
    schema = ("metric string, stratum string, part string, n long, mean_h double, "
              "mean_a double, m2_h double, m2_a double, c_ha double")
    try:
        rows = frame.mapInArrow(lambda batches: gold_batches(batches, gold, strata, wanted),
                                schema).collect()
    except Exception as exc:  # a task failed: Spark's error, on one line
        raise RankevalError(f"the Spark job failed: {job_error(exc)}") from None
    return added(tuple(r) for r in rows)


def _by_partition_value(inputs, columns, column: str, ordered: bool, settings: Settings,
                        chunk_rows: int, stats):
    """(the scored frame, the layout) of inputs partitioned by user in ``column``'s
    directories: one task per value, reading its files, no shuffle (``buckets``)."""
    for _, label, fmt in inputs:
        if fmt != "parquet":  # a path in another format, or a DataFrame (labelled by role)
            given = "a DataFrame" if label in ("predictions", "truth", "train") else fmt
            raise OptionError(f"{{opt:spark_partitioned_by}} reads Parquet datasets by path; "
                              f"{label} is {given}")
    layout, key_text = describe(inputs, columns)
    layout = dataclasses.replace(layout, chunk_rows=chunk_rows, stats=stats)
    buckets = find([label for _, label, _ in inputs], column)
    spark = inputs[0][0].sparkSession
    n = len(buckets.values)
    schema = output_schema(settings, "sample" in layout.preds)
    out = spark.range(0, n, 1, n).mapInArrow(
        lambda batches: run_buckets(batches, buckets, layout, settings, key_text, ordered),
        _spark_schema(schema))
    return out, layout


def _by_files(inputs, columns, partitions: int | None, ordered: bool, settings: Settings,
              chunk_rows: int, stats):
    """(the scored frame, the layout) of inputs that are all Parquet files given by path:
    read by pyarrow in Python tasks and shuffled as Arrow blobs (``exchange``), 1.8x faster
    than Spark's reading, shuffling and gathering of the rows on 200M rows; None for any
    other inputs, and on Spark Connect (its server's files are not the client's)."""
    if any(fmt != "parquet" or ".connect." in type(df).__module__ for df, _, fmt in inputs):
        return None  # DataFrames' format is "spark"
    layout, key_text = describe(inputs, columns)
    reading = dataclasses.replace(layout, chunk_rows=chunk_rows)  # without the item stats
    layout = dataclasses.replace(reading, stats=stats)
    wanted = [{name for _, name in roles.values()} for roles in layout.sides]
    units = find_units([df for df, _, _ in inputs], wanted,
                       [roles["user"][1] for roles in layout.sides])
    if units is None or not units.units:
        return None
    spark = inputs[0][0].sparkSession
    n = partitions or _partitions(inputs[0][0], inputs[1][0]) or _shuffle_partitions(spark)
    # a partition's blobs reach Python in one Arrow batch, whose binary column holds < 2 GiB
    n = max(n, -(-units.bytes // (512 << 20)))
    targets = shuffle_keys(spark, n)
    tasks = len(units.units)
    blobs = spark.range(0, tasks, 1, tasks).mapInArrow(
        lambda batches: read_pack(batches, units, reading, key_text, ordered, targets),
        _spark_schema(SCHEMA)).repartition(n, SCHEMA.names[0])
    out = blobs.mapInArrow(lambda batches: run(unpacked(batches, layout), layout, settings,
                                               flat=True),
                           _spark_schema(output_schema(settings, "sample" in layout.preds)))
    return out, layout


def _shuffle_partitions(spark) -> int:
    """``spark.sql.shuffle.partitions`` as the user set it (Databricks' ``auto``: two per
    core)."""
    value = spark.conf.get("spark.sql.shuffle.partitions")
    return int(value) if value.isdigit() else 2 * spark.sparkContext.defaultParallelism


def validate_frames(preds, truth, settings: Settings, columns: dict[str, str | None],
                    acknowledged: frozenset[str] = frozenset(), partitions: int | None = None,
                    chunk_rows: int = CHUNK_ROWS, extras: SparkExtras | None = None,
                    partitioned_by: str | None = None) -> Validation:
    """``rankeval.validate_inputs`` on Spark: every problem and count of the inputs."""
    extras = extras or SparkExtras()
    out = Validation(acknowledged=acknowledged)
    try:
        stats, _ = item_stats(preds, extras, settings, columns)
    except InputError as exc:  # the catalog: its problems, then the rest
        out.errors.append(exc)
        stats = None
    try:
        results, scored, layout = _scored(preds, truth, settings, columns, partitions,
                                          chunk_rows, extras.train, stats, partitioned_by)
    except InputError as exc:  # users under two partition values
        out.errors.append(exc)
        return out
    scored.unpersist()
    labels = preds[1], truth[1]
    rows = [sum(r.rows[i] for r in results) for i in range(len(layout.sides))]
    inputs = [("predictions", preds), ("truth", truth), ("train", extras.train)]
    for (role, data), roles, n in zip(inputs, layout.sides, rows, strict=False):
        out.inputs[role] = {"path": data[1], "format": data[2], "rows": n,
                            "columns": {r: name for r, (_, name) in roles.items()}}
    return counted(out, results, labels, settings)


def _partitions(preds, truth) -> int | None:
    """Partitions of users: four per input split (a split holds up to 128 MiB of file, a
    partition then a few million rows, which a Python worker scores in one or two chunks),
    at least two per core. Measured on 10M rows with 2 cores: 200 partitions (Spark's
    default) took twice as long as 8 to 16, from the cost of each task, and letting adaptive
    execution coalesce them 1.7x as long. None (Spark's ``spark.sql.shuffle.partitions``)
    when that is set, or on Spark Connect."""
    try:
        spark = preds.sparkSession
        if spark.conf.get("spark.sql.shuffle.partitions") != "200":  # chosen by the user
            return None
        splits = preds.rdd.getNumPartitions() + truth.rdd.getNumPartitions()
        return max(2 * spark.sparkContext.defaultParallelism, 4 * splits)
    except Exception:  # Spark Connect has no RDDs
        return None


def _file_order(settings: Settings, columns, preds) -> bool:
    """Whether the input order of rows decides anything: a tie rule of ``FILE_ORDER_TIES``
    (``ties="input"`` or ``"ranx"``; for some metric: cwl_eval's under ``ties="provider"``),
    or a run without a rank or score column (its rows
    in file order are the ranking)."""
    if tie_rules(settings) & set(FILE_ORDER_TIES):
        return True
    found = resolve_role(list(preds.columns), "predictions",
                         {c: v for c, v in columns.items() if v}, "predictions")
    return found["rank"] is None and found["score"] is None


def _finish(results: list[ChunkResult], scored, settings: Settings, labels, formats,
            extras: SparkExtras, stats, summaries) -> Evaluation:
    try:
        partial, sides, found = merged(results, labels, formats, settings)
    except InputError:
        scored.unpersist()
        raise
    try:
        extra_sides: dict[str, Any] = {role: Side(Source(s.path, s.format, s.rows))
                                       for role, s in summaries.items()}
        ev = finish(partial, settings, sides[0], sides[1], Extras(**extra_sides), stats,
                    judgements=found, extra_inputs=summaries)
    except RankevalError:
        scored.unpersist()
        raise
    return dataclasses.replace(ev, store=SparkValues.of(scored.frame, scored.cache, partial,
                                                         scored.extra))


class _Cached:
    def __init__(self, frame, cache, extra: tuple[str, ...] = ()):
        self.frame, self.cache, self.extra = frame, cache, extra

    def unpersist(self) -> None:
        self.cache.unpersist()


def _spark_schema(schema):
    from pyspark.sql import types as T  # optional dependency: rankeval[spark]

    kinds = {"int8": T.ByteType(), "int64": T.LongType(), "string": T.StringType(),
             "double": T.DoubleType(), "binary": T.BinaryType()}
    return T.StructType([T.StructField(f.name, kinds[str(f.type)]) for f in schema])
