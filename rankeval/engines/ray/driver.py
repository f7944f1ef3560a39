"""The Ray engine's driver: the inputs read by Ray Data (or given as Datasets), split by user
and scored in tasks (``exchange``), the partials merged into an ``Evaluation``, and
``validate_inputs``."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from rankeval.engines.distributed.chunks import (
    CHUNK_ROWS,
    KEY,
    ChunkResult,
    Layout,
    extra_columns,
    output_schema,
)
from rankeval.engines.distributed.gold import Parts, added
from rankeval.engines.distributed.merge import counted, deterministic, merged
from rankeval.engines.finish import finish
from rankeval.engines.ray.cluster import init
from rankeval.engines.ray.exchange import moments, remote, score, split
from rankeval.engines.ray.items import RayExtras, item_stats
from rankeval.engines.ray.items import extra_inputs as extra_inputs  # the engine class's
from rankeval.engines.ray.read import Input, job_error, read_input
from rankeval.engines.ray.result import RayValues
from rankeval.engines.validation import Validation
from rankeval.errors import InputError, RankevalError
from rankeval.io.columns import resolve_role
from rankeval.results.evaluation import Evaluation
from rankeval.settings import Settings

_ROLES = ("predictions", "truth", "train")
_SPLIT_ROWS = 50_000  # rows of input a split task takes at least, of a partition at least


def read_inputs(predictions: Any, truth: Any, preds_format: str | None = None,
                truth_format: str | None = None, reading: dict[str, Any] | None = None
                ) -> tuple[Input, Input]:
    """Both inputs read by Ray Data (or given as Datasets), in input order."""
    return (read_input(predictions, "predictions", preds_format, "preds_format", reading),
            read_input(truth, "truth", truth_format, "truth_format", reading))


def evaluate_inputs(preds: Input, truth: Input, settings: Settings, columns: dict[str, str | None],
                    partitions: int | None = None, extras: RayExtras | None = None
                    ) -> Evaluation:
    """Score two inputs; raises the first input error found."""
    stats, loaded = item_stats(preds, extras or RayExtras(), settings, columns)
    train = extras.train if extras is not None else None
    results, per_user = _scored(preds, truth, settings, columns, partitions, train, stats)
    partial, sides, found = merged(results, (preds.label, truth.label),
                                   (preds.format, truth.format), settings)
    ev = finish(partial, settings, sides[0], sides[1], loaded, stats, judgements=found)
    return dataclasses.replace(ev, store=per_user)


def _scored(preds: Input, truth: Input, settings: Settings, columns, partitions, train=None,
            stats=None) -> tuple[list[ChunkResult], RayValues]:
    """Every partition's result (with rows), and its per-user tables."""
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


def gold_parts(store: RayValues, gold, strata, metrics) -> Parts:
    """``--gold``: a task per partition of the machine values gives its moments
    (``distributed.gold``), added up here; the values stay in the object store."""
    ray = init()
    shared = ray.put((gold, strata, list(metrics)))  # once, not once per task
    found = _get(ray, [remote(moments).remote(shared, block) for block in store.blocks])
    return added(row for rows in found for row in rows)


def _shards(inputs: list[Input], layout: Layout, users: list[str], n: int, text_key: bool,
            cpus: int) -> list[list]:
    """Per partition of users, the refs of its rows from every input, in input order: a
    split task per run of consecutive blocks (Ray Data's blocks can be small: a task and
    ``n`` objects for each would cost more than the rows), returning one table per
    partition."""
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


def validate_inputs(preds: Input, truth: Input, settings: Settings, columns: dict[str, str | None],
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
    inputs = [preds, truth, *([extras.train] if extras.train is not None else [])]
    layout, _, _ = _layout(inputs, columns)
    for side, data in enumerate(inputs):
        out.inputs[_ROLES[side]] = {
            "path": data.label, "format": data.format,
            "rows": sum(r.rows[side] for r in results),
            "columns": {r: name for r, (_, name) in layout.sides[side].items()}}
    return counted(out, results, labels, settings)

