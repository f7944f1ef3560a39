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
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import warnings
from typing import Any, Unpack

import numpy as np

from rankeval.api.evaluate import evaluate as evaluate_on
from rankeval.dependencies import check_versions
from rankeval.engines.distributed.chunks import (
    CHUNK_ROWS,
    KEY,
    ChunkResult,
    Layout,
    extra_columns,
    output_schema,
)
from rankeval.engines.distributed.merge import (
    Side,
    counted,
    deterministic,
    empty_inputs,
    judgements,
    merged_errors,
    rows_per_input,
)
from rankeval.engines.finish import finish
from rankeval.engines.partial import merge
from rankeval.engines.signals import ON_SIGNAL, signal_handlers_kept
from rankeval.engines.validation import Validation
from rankeval.errors import InputError, RankevalError
from rankeval.io.columns import resolve_role
from rankeval.io.readers import Source
from rankeval.ray.items import RayExtras, item_stats
from rankeval.ray.read import Input, job_error, read_input
from rankeval.ray.result import RayValues
from rankeval.results.evaluation import Evaluation
from rankeval.settings import EvaluateOptions

__all__ = ["RayValues", "evaluate", "evaluate_inputs", "init", "read_inputs",
           "validate_inputs"]

_ROLES = ("predictions", "truth", "train")
_SPLIT_ROWS = 50_000  # rows of input a split task takes at least, of a partition at least


def init(address: str | None = None):
    """Ray for the job: the running one (``ray.init`` called already, as in a notebook), else
    the cluster at ``address`` (``ray://host:10001``, ``host:6379``, ``auto``), else
    ``RAY_ADDRESS``'s, else a new local Ray on this machine's cores, shut down when the
    process exits. Ray's own console logs at ERROR: its session's log files keep them."""
    try:
        import ray
    except ImportError:
        raise RankevalError("the Ray engine needs ray: pip install 'rankeval[ray]' (from this "
                            "checkout: pip install -e '.[ray]')") from None
    check_versions("ray")
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    options: dict[str, Any] = dict(address=address, log_to_driver=False,
                                   logging_level=logging.ERROR)
    if address is None:
        # "local": a new Ray for the run (Ray's default would join the last cluster `ray
        # start` ran on this machine, and wait minutes for one since stopped)
        options.update(address="local", include_dashboard=False)
    else:
        _answers(address)
    try:
        with warnings.catch_warnings(), signal_handlers_kept():
            warnings.simplefilter("ignore")  # Ray Client's connection warnings: errors say
            ray.init(**options)
    except Exception as exc:  # no cluster at the address, a version mismatch
        raise RankevalError(f"Ray did not start: {job_error(exc)}") from None
    ON_SIGNAL.append(ray.shutdown)  # a signal: the local Ray's processes end with the run
    if address is None:  # a fresh local Ray: its workers import while the driver reads
        from rankeval.ray.exchange import remote, warm

        for _ in range(int(ray.cluster_resources().get("CPU", 1))):
            remote(warm).remote()
    return ray


def _answers(address: str) -> None:
    """Something listens at ``address`` (a cluster's ``host:port``), else one line at once:
    Ray itself would retry for a minute or more, its C++ client warning on stderr."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():  # "auto", "local": Ray finds the cluster itself
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise RankevalError(f"Ray did not start: nothing answers at {address} "
                            f"({exc.strerror or type(exc).__name__})") from None


def evaluate(
    predictions: Any,
    truth: Any,
    metrics: str | Any = None,
    k: int | str | Any = None,
    *,
    compat: str | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
    train: Any = None,
    catalog: Any = None,
    item_features: Any = None,
    item_groups: Any = None,
    propensity: Any = None,
    ray_address: str | None = None,
    partitions: int | None = None,
    **options: Unpack[EvaluateOptions],
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
    result = evaluate_on(predictions, truth, metrics, k, compat=compat,
                         preds_format=preds_format, truth_format=truth_format, train=train,
                         catalog=catalog, item_features=item_features,
                         item_groups=item_groups, propensity=propensity, engine="ray",
                         engine_options={"ray_address": ray_address,
                                         "partitions": partitions}, **options)
    assert isinstance(result.store, RayValues)  # what the Ray engine gives
    return result


def read_inputs(predictions: Any, truth: Any, preds_format: str | None = None,
                truth_format: str | None = None, reading: dict[str, Any] | None = None
                ) -> tuple[Input, Input]:
    """Both inputs read by Ray Data (or given as Datasets), in input order."""
    return (read_input(predictions, "predictions", preds_format, "preds_format", reading),
            read_input(truth, "truth", truth_format, "truth_format", reading))


def evaluate_inputs(preds: Input, truth: Input, settings, columns: dict[str, str | None],
                    partitions: int | None = None, extras: RayExtras | None = None
                    ) -> Evaluation:
    """Score two inputs; raises the first input error found."""
    stats, loaded = item_stats(preds, extras or RayExtras(), settings, columns)
    train = extras.train if extras is not None else None
    results, per_user = _scored(preds, truth, settings, columns, partitions, train, stats)
    errors = merged_errors(results)
    if errors:
        raise errors[0]
    empty = empty_inputs(results, (preds.label, truth.label))
    if empty:
        raise empty[0]
    rows = rows_per_input(results)
    partial = merge([r.partial for r in results if r.partial is not None])
    found = judgements(results, truth.label, rows[1], settings)
    # finish reads only .source of the inputs, which stay in the object store
    sides: list[Any] = [Side(Source(i.label, i.format, n)) for i, n in zip((preds, truth), rows,
                                                                            strict=True)]
    ev = finish(partial, settings, sides[0], sides[1], loaded, stats, judgements=found)
    return dataclasses.replace(ev, store=per_user)


def _scored(preds: Input, truth: Input, settings, columns, partitions, train=None, stats=None
            ) -> tuple[list[ChunkResult], RayValues]:
    """Every partition's result (with rows), and its per-user tables."""
    from rankeval.ray.exchange import remote, score

    ray = init()
    inputs = [preds, truth, *([train] if train is not None else [])]
    layout, users, text_key = _layout(inputs, columns)
    layout = dataclasses.replace(layout, stats=stats)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    n = partitions or _partitions(cpus, sum(i.rows for i in inputs))
    shards = _shards(inputs, layout, users, n, text_key, cpus)
    shared = ray.put((layout, settings))  # once, not once per task: item vectors can be large
    outs = [remote(score).options(num_returns=2).remote(shared, *s) for s in shards]
    del shards  # each goes once its partition is scored
    results = _get(ray, [o[1] for o in outs])
    schema = output_schema(settings, "sample" in layout.preds)
    names, extra = tuple(schema.names[1:-1]), extra_columns(schema, settings)
    kept = [(o[0], r) for o, r in zip(outs, results, strict=True) if r is not None]
    results = [r for _, r in kept]
    if extra and (fixed := deterministic(results)) is not None:
        results, names, extra = fixed, tuple(c for c in names if c not in extra), ()
    return results, RayValues([b for b, _ in kept], names, extra)


def _shards(inputs: list[Input], layout: Layout, users: list[str], n: int, text_key: bool,
            cpus: int) -> list[list]:
    """Per partition of users, the refs of its rows from every input, in input order: a
    split task per run of consecutive blocks (Ray Data's blocks can be small: a task and
    ``n`` objects for each would cost more than the rows), returning one table per
    partition."""
    from rankeval.ray.exchange import remote, split

    shards: list[list] = [[] for _ in range(n)]
    for side, data in enumerate(inputs):
        roles = list(layout.sides[side].values())
        tasks = min(len(data.blocks), max(2 * cpus, math.ceil(data.rows / _SPLIT_ROWS)))
        for run in np.array_split(np.arange(len(data.blocks)), tasks):
            out = remote(split).options(num_returns=n).remote(
                side, roles, users[side], n, text_key, *[data.blocks[i] for i in run])
            for p, ref in enumerate([out] if n == 1 else out):
                shards[p].append(ref)
    return shards


def _get(ray, refs: list) -> list:
    """The tasks' results; a task's failure is one line (Ray's traceback is in its logs)."""
    try:
        return ray.get(refs)
    except Exception as exc:  # a crashed worker, an error in a task
        raise RankevalError(f"the Ray job failed: {job_error(exc)}") from None


def _layout(inputs: list[Input], columns: dict[str, str | None]
            ) -> tuple[Layout, list[str], bool]:
    """(how the partitions' tables map back to each input's columns, each input's user
    column, whether user ids go as text: when the inputs give them different types)."""
    overrides = {c: v for c, v in columns.items() if v}
    sides, users, types = [], [], set()
    for side, data in enumerate(inputs):
        found = resolve_role(data.columns, _ROLES[side], overrides, data.label)
        names = {role: name for role, name in found.items() if name is not None}
        sides.append({role: (KEY if role == "user" else f"{'ptr'[side]}_{role}", name)
                      for role, name in names.items()})
        users.append(names["user"])
        types.add(data.types[data.columns.index(names["user"])])
    layout = Layout(tuple(i.label for i in inputs), tuple(i.format for i in inputs),
                    tuple(sides))
    return layout, users, len(types) > 1


def _partitions(cpus: int, rows: int) -> int:
    """Partitions of users: one per CPU of the cluster, none under ``_SPLIT_ROWS`` rows, more
    where they would pass ``CHUNK_ROWS`` rows each. Each costs a task and an object per split
    task: on 2 CPUs, 1M rows took 0.81 s in 2 partitions, 1.04 s in 4, 1.14 s in 8; 100,000
    rows 0.32 s in 1 or 2, 0.53 s in 8."""
    return max(1, min(cpus, rows // _SPLIT_ROWS), math.ceil(rows / CHUNK_ROWS))


def validate_inputs(preds: Input, truth: Input, settings, columns: dict[str, str | None],
                    acknowledged: frozenset[str] = frozenset(), partitions: int | None = None,
                    extras: RayExtras | None = None) -> Validation:
    """``rankeval.validate_inputs`` on Ray: every problem and count of the inputs."""
    extras = extras or RayExtras()
    out = Validation(acknowledged=acknowledged)
    try:
        stats, _ = item_stats(preds, extras, settings, columns)
    except InputError as exc:  # the catalog or the training rows: their problems, then the rest
        out.errors.append(exc)
        stats = None
    results, _ = _scored(preds, truth, settings, columns, partitions, extras.train, stats)
    labels = preds.label, truth.label
    out.errors += merged_errors(results) + empty_inputs(results, labels)
    inputs = [preds, truth, *([extras.train] if extras.train is not None else [])]
    layout, _, _ = _layout(inputs, columns)
    for side, data in enumerate(inputs):
        out.inputs[_ROLES[side]] = {
            "path": data.label, "format": data.format,
            "rows": sum(r.rows[side] for r in results),
            "columns": {r: name for r, (_, name) in layout.sides[side].items()}}
    return counted(out, results, labels, rows_per_input(results), settings)

