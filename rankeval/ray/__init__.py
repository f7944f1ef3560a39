"""The Ray engine: rankeval's kernels over Ray Datasets, with the local engine's numbers.

>>> from rankeval.ray import evaluate
>>> result = evaluate("s3://recs/preds/", "s3://recs/truth/", metrics=["ndcg", "map"], k=10)
>>> result.metrics["ndcg@10"]         # the same means, counts and notices as locally
>>> result.per_user.write_parquet(p)  # per-user values stay in the object store (a Dataset)

Ray Data reads the inputs into Arrow blocks; a task per block splits it by a hash of the user
ids (``exchange.split``), so that a task per partition of users gets every row of its users
from every input and scores them with the local engine (``exchange.score``). Each returns its
per-user table (left in the object store) and its partial result, which the driver merges
exactly (integer counts, exactly rounded sums): the means do not depend on partitioning.

This module is the public door; the engine lives in ``rankeval.engines.ray`` (``cluster``,
``driver``, ``exchange``, ``items``, ``read``, ``result``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Unpack

from rankeval.api.evaluate import evaluate as evaluate_on
from rankeval.api.request import Options
from rankeval.engines.ray.cluster import init
from rankeval.engines.ray.driver import evaluate_inputs, read_inputs, validate_inputs
from rankeval.engines.ray.result import RayValues
from rankeval.results.evaluation import Evaluation

__all__ = ["RayValues", "evaluate", "evaluate_inputs", "init", "read_inputs",
           "validate_inputs"]


def evaluate(
    predictions: Any,
    truth: Any,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    ray_address: str | None = None,
    partitions: int | None = None,
    **options: Unpack[Options],
) -> Evaluation:
    """``rankeval.evaluate`` on Ray: ``predictions``, ``truth`` (and ``train``, ``catalog``)
    are Ray Datasets (columns found by name or alias, or named with ``user_col``...) or paths
    Ray Data reads (Parquet, CSV, TSV; files, directories, globs, on any filesystem pyarrow
    knows: ``s3://``, ``gs://``...); ``item_features``, ``item_groups`` and ``propensity`` are
    read on this machine (any form ``rankeval.evaluate`` takes). The same settings as
    ``rankeval.evaluate``. ``ray_address``: the cluster (default: the running Ray, else
    ``RAY_ADDRESS``, else a local one, ``init``); ``partitions``: how many partitions of users
    (default: one per CPU of the cluster, fewer for inputs under 50,000 rows a partition,
    more past 2M rows a partition). Every
    other keyword is ``rankeval.evaluate``'s."""
    result = evaluate_on(predictions, truth, metrics, k, engine="ray",
                         engine_options={"ray_address": ray_address,
                                         "partitions": partitions}, **options)
    # what the Ray engine gives (never preferences: scored by the local engine alone)
    assert isinstance(result, Evaluation) and isinstance(result.store, RayValues)
    return result
