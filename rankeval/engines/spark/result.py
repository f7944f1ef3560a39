"""The Spark engine's per-user store (``SparkValues``: the values stay on the cluster)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.segments import MISSING, Segment, ordered_values, table_labels
from rankeval.engines.distributed.store import ClusterValues, local_values
from rankeval.io.datasets import write_dataset
from rankeval.results.store import LocalValues


@dataclass(frozen=True, eq=False)
class SparkValues(ClusterValues):
    """Per-user values that stay on the cluster: a (cached) Spark DataFrame, user_id + one
    column per metric (``results.store.Store``). The distribution and segment means are
    computed there; the values come to the driver only when asked (``collect``: users x
    metrics doubles), for what needs them all in one place: bootstrap intervals, the HTML
    page's charts, per-query lines."""

    engine = "Spark"
    frame_kind = "a Spark DataFrame"
    spark_frame: Any  # user_id + one column per metric
    cache: Any = field(default=None, compare=False)
    # metric -> (exact parts of the sum of its per-user values, users it scored)
    sums: dict[str, tuple[tuple[float, ...], int]] = field(default_factory=dict)
    local: LocalValues | None = None  # the values on the driver too, once collected
    # more per-user columns after the metrics (a stochastic run's samples and spreads)
    extra: tuple[str, ...] = ()

    @classmethod
    def of(cls, frame, cache, partial, extra: tuple[str, ...] = ()) -> SparkValues:
        sums = {str(s): (parts, partial.scored.get(s, partial.counts.evaluated))
                for s, parts in partial.sums.items()}
        return cls(frame, cache, sums, extra=extra)

    def _metrics(self, columns: list[str]) -> list[str]:
        return [c for c in columns if c != "user_id" and c not in self.extra
                and not c.startswith("_seg")]

    def frame(self):
        """A Spark DataFrame (cached), one row per evaluated user."""
        return self.spark_frame

    def write(self, path: str) -> None:
        """A Parquet dataset (a directory) at ``path``, on any filesystem Spark knows
        (``io.datasets.write_dataset``: a local one moved in place when complete)."""
        write_dataset(path, "spark", lambda where: self.spark_frame.write.mode(
            "overwrite" if "://" in where else "errorifexists").parquet(where))

    def unpersist(self) -> None:
        """Free the cluster's cached per-user rows (the frame is recomputed if used)."""
        if self.cache is not None:
            self.cache.unpersist()

    def collect(self) -> SparkValues:
        """The store with the values on the driver too, in the local engine's user order (so
        that intervals drawn from them are the local engine's, seed for seed)."""
        if self.local is not None:
            return self
        table = self.spark_frame.orderBy("user_id").toArrow()  # byte order, as local codes
        return dataclasses.replace(self, local=local_values(table, self.extra))

    def describe(self, wanted: Sequence[str]) -> dict[str, dict[str, float]]:
        """On the cluster in one pass: exact means (from the exact sums), exact percentiles
        (Spark's ``percentile``: numpy's linear interpolation), min, max, share of zeros;
        the sample standard deviation to within rounding of numpy's."""
        from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

        metrics = self._metrics(self.spark_frame.columns)
        quantiles = [q for q in (_quantile(n) for n in wanted) if q is not None]
        exprs = []
        for i, name in enumerate(metrics):
            col = F.col(f"`{name}`")
            v = F.when(~F.isnan(col), col)  # users a metric could not score: left out
            exprs += [F.count(v).alias(f"n{i}"), F.min(v).alias(f"min{i}"),
                      F.max(v).alias(f"max{i}"), F.stddev_samp(v).alias(f"std{i}"),
                      F.count(F.when(v == 0, 1)).alias(f"zeros{i}")]
            if quantiles:
                exprs.append(F.percentile(v, [q / 100 for q in quantiles]).alias(f"q{i}"))
        row = self.spark_frame.agg(*exprs).collect()[0].asDict()
        table = {}
        for i, name in enumerate(metrics):
            n = row[f"n{i}"]
            at = dict(zip(quantiles, row.get(f"q{i}") or [], strict=False))
            table[name] = {stat: _stat(stat, n, row, i, at, self.sums.get(name))
                           for stat in wanted}
        return table

    def segment_means(self, table: Any, by: Any) -> dict[str, list]:
        """The user table (read on this machine: one row per user) joined to the per-user
        values on the cluster; means are sums over counts, as locally (to within the
        rounding of the sum's order)."""
        users, columns = table_labels(table, by)
        words = list(columns)
        labels = pa.table({"user_id": users, **{f"_seg{j}": pa.array(
            columns[w][0].astype(str), pa.string()) for j, w in enumerate(words)}})
        spark = self.spark_frame.sparkSession
        joined = self.spark_frame.join(spark.createDataFrame(labels), "user_id", "left")
        return {w: _segment_means(joined, f"_seg{j}", columns[w][1],
                                  self._metrics(joined.columns))
                for j, w in enumerate(words)}


def _segment_means(joined, column: str, rank, metrics: list[str]) -> list:
    """One ``Segment`` per label of ``column`` (``(missing)``: users not in the table)."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]
    label = F.coalesce(F.col(column), F.lit(MISSING)).alias("label")
    exprs = [F.count(F.lit(1)).alias("users")]
    for i, name in enumerate(metrics):
        col = F.col(f"`{name}`")
        v = F.when(~F.isnan(col), col)
        exprs += [F.sum(v).alias(f"s{i}"), F.count(v).alias(f"n{i}")]
    rows = {r["label"]: r for r in joined.groupBy(label).agg(*exprs).collect()}
    return [Segment(value, int(rows[value]["users"]),
                    {m: (float(rows[value][f"s{i}"]) / rows[value][f"n{i}"]
                         if rows[value][f"n{i}"] else math.nan) for i, m in enumerate(metrics)})
            for value in ordered_values(np.array(list(rows), dtype=object), rank)]


def _quantile(name: str) -> int | None:
    return 50 if name == "median" else int(name[1:]) if name.startswith("p") else None


def _stat(name: str, n: int, row: dict, i: int, quantiles: dict, sums) -> float:
    """One statistic as ``distribution.describe`` gives it (NaN, undefined, for no users)."""
    if not n:
        return math.nan
    if name == "mean":
        return math.fsum(sums[0]) / sums[1]
    if name == "std":
        return float(row[f"std{i}"]) if n > 1 else 0.0
    if name == "zeros":
        return row[f"zeros{i}"] / n
    if name in ("min", "max"):
        return float(row[f"{name}{i}"])
    return float(quantiles[_quantile(name)])
