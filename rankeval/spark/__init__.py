"""The Spark engine: rankeval's kernels over Spark DataFrames, with the local engine's numbers.

>>> from rankeval.spark import evaluate
>>> result = evaluate(preds_df, truth_df, metrics=["ndcg", "map"], k=10)
>>> result.metrics["ndcg@10"]         # the same means, counts and notices as locally
>>> result.per_user.write.parquet(p)  # per-user values stay a (cached) Spark DataFrame

Parquet inputs given by path are read by pyarrow in Python tasks and cut by user there
(``exchange``); other inputs are repartitioned by user and gathered in lists per user by
Spark (``frames.combine``). ``worker.run`` scores
complete users chunk by chunk with the local engine (``mapInArrow``: one Python call per
chunk, not per user) and sends back each chunk's partial result, which the driver merges
exactly (integer counts, exactly rounded sums), so the means do not depend on partitioning.

This module is the public door; the engine lives in ``rankeval.engines.spark`` (``driver``,
``session``, ``worker``, ``frames``, ``exchange``, ``buckets``, ``items``, ``result``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack

from rankeval.api.evaluate import evaluate as evaluate_on
from rankeval.api.request import Options
from rankeval.engines.distributed.chunks import CHUNK_ROWS as CHUNK_ROWS
from rankeval.engines.spark.driver import evaluate_frames as evaluate_frames
from rankeval.engines.spark.driver import extra_frames as extra_frames
from rankeval.engines.spark.driver import input_frames as input_frames
from rankeval.engines.spark.driver import validate_frames as validate_frames
from rankeval.engines.spark.result import SparkValues
from rankeval.engines.spark.session import session
from rankeval.results.evaluation import Evaluation

# and, as before the engine moved under rankeval.engines.spark (#47): CHUNK_ROWS,
# input_frames, extra_frames, evaluate_frames, validate_frames
__all__ = ["SparkValues", "evaluate", "session"]


def evaluate(
    predictions: Any,
    truth: Any,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    spark: Any = None,
    partitions: int | None = None,
    chunk_rows: int = CHUNK_ROWS,
    partitioned_by: str | None = None,
    **options: Unpack[Options],
) -> Evaluation:
    """``rankeval.evaluate`` on Spark: ``predictions``, ``truth`` (and ``train``,
    ``catalog``) are Spark DataFrames (columns found by name or alias, or named with
    ``user_col``...) or paths Spark reads (Parquet, CSV, TSV, JSON Lines, TREC; files,
    directories, globs, any filesystem of the cluster); ``item_features``, ``item_groups``
    and ``propensity`` are read on this machine (any form ``rankeval.evaluate`` takes). The
    same settings as ``rankeval.evaluate``. ``spark``: the session (default: ``session()``);
    ``partitions``: how many partitions of users (default: from the input splits);
    ``chunk_rows``: rows scored at once in a task; ``partitioned_by``: the inputs are Parquet
    datasets already partitioned by user in that column's Hive-style directories
    (``bucket=0/``...): each value is scored in one task, read by pyarrow, with no
    shuffle. Every other keyword is ``rankeval.evaluate``'s.
    """
    result = evaluate_on(predictions, truth, metrics, k, engine="spark",
                         engine_options={"spark": spark, "partitions": partitions,
                                         "chunk_rows": chunk_rows,
                                         "spark_partitioned_by": partitioned_by}, **options)
    # what the Spark engine gives (never preferences: scored by the local engine alone)
    assert isinstance(result, Evaluation) and isinstance(result.store, SparkValues)
    return result
