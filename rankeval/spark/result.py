"""The Spark engine's result (an ``Evaluation`` whose per-user values stay on the cluster) and
the merge of the input errors found by every task."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.distribution import STATS, parse_stats
from rankeval.errors import InputError, OptionError
from rankeval.evaluation import Evaluation


@dataclass(frozen=True)
class SparkEvaluation(Evaluation):
    """An ``Evaluation`` (means, counts, notices, settings, reports and gates as locally)
    whose per-user values are a Spark DataFrame, ``per_user``: write it with
    ``write_per_user(path)`` or ``per_user.write``. They come to the driver only when asked
    (``collect_values``: users x metrics doubles), for what needs them all in one place:
    bootstrap intervals, the HTML page's charts, per-query lines."""

    frame: Any = field(default=None, repr=False)  # user_id + one column per metric
    _cache: Any = field(default=None, repr=False, compare=False)
    # metric -> (exact parts of the sum of its per-user values, users it scored)
    _sums: dict[str, tuple[tuple[float, ...], int]] = field(default_factory=dict, repr=False)
    collected: bool = False  # the per-user values are also on the driver (collect_values)

    @classmethod
    def of(cls, ev: Evaluation, frame, cache, partial) -> SparkEvaluation:
        fields = {f.name: getattr(ev, f.name) for f in dataclasses.fields(Evaluation)}
        sums = {str(s): (parts, partial.scored.get(s, partial.counts.evaluated))
                for s, parts in partial.sums.items()}
        return cls(**fields, frame=frame, _cache=cache, _sums=sums)

    @property
    def per_user(self):
        """One row per evaluated user, one column per metric: a (cached) Spark DataFrame."""
        return self.frame

    def write_per_user(self, path: str) -> None:
        """The per-user values as a Parquet dataset (a directory) at ``path``, on any
        filesystem Spark knows. A local directory is written beside and moved in place when
        complete, replacing an earlier dataset (never another kind of directory)."""
        if "://" in path:
            self.frame.write.mode("overwrite").parquet(path)
            return
        check_dataset_path(path)
        target = Path(path).absolute()
        tmp = target.with_name(f".{target.name}.rankeval-{os.getpid()}")
        try:
            self.frame.write.mode("errorifexists").parquet(str(tmp))
            _umask_modes(tmp)
            if target.exists():
                old = target.with_name(f".{target.name}.rankeval-old-{os.getpid()}")
                target.rename(old)
                tmp.rename(target)
                shutil.rmtree(old)
            else:
                tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def unpersist(self) -> None:
        """Free the cluster's cached per-user rows (``per_user`` is recomputed if used)."""
        if self._cache is not None:
            self._cache.unpersist()

    def collect_values(self) -> SparkEvaluation:
        """A copy with the per-user values on the driver, in the local engine's user order
        (so that intervals drawn from them are the local engine's, seed for seed)."""
        if self.collected:
            return self
        from rankeval.evaluation import _numeric_order
        from rankeval.io.arrow import to_numpy

        table = self.frame.orderBy("user_id").toArrow()  # byte order, as local user codes
        users = table.column("user_id").combine_chunks()
        values = {spec: to_numpy(table.column(str(spec))).astype(np.float64)
                  for spec in self.specs if str(spec) in table.column_names}
        order = _numeric_order(users)
        if order is not None:
            users = users.take(pa.array(order))
            values = {s: v[order] for s, v in values.items()}
        return dataclasses.replace(self, _values=values, _user_array=users, collected=True)

    def _distributed(self, what: str):
        return OptionError(f"{what} needs the per-user values on one machine; with the Spark "
                           "engine they stay on the cluster: use .per_user (a Spark DataFrame)"
                           " or .write_per_user(path)")

    def values(self, metric):
        if not self.collected:
            raise self._distributed("values()")
        return super().values(metric)

    @property
    def user_ids(self):
        if not self.collected:
            raise self._distributed("user_ids")
        return self._user_array.to_numpy(zero_copy_only=False)

    @property
    def user_id_array(self):
        if not self.collected:
            raise self._distributed("user_id_array")
        return self._user_array

    def per_user_table(self):
        if not self.collected:
            raise self._distributed("per_user_table()")
        return super().per_user_table()

    def with_stats(self, stats: str | Iterable[str] = STATS):
        """``Evaluation.with_stats`` computed on the cluster in one pass: exact means (from
        the exact sums), exact percentiles (Spark's ``percentile``: numpy's linear
        interpolation), min, max, share of zeros; the sample standard deviation to within
        rounding of numpy's."""
        from pyspark.sql import functions as F

        wanted = parse_stats(stats)
        metrics = [s for s in self.frame.columns if s != "user_id"]
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
        row = self.frame.agg(*exprs).collect()[0].asDict()
        table = {}
        for i, name in enumerate(metrics):
            n = row[f"n{i}"]
            at = dict(zip(quantiles, row.get(f"q{i}") or [], strict=False))
            table[name] = {stat: _stat(stat, n, row, i, at, self._sums.get(name))
                           for stat in wanted}
        return dataclasses.replace(self, distribution=table)

    def with_intervals(self, level: float = 0.95, rounds: int = 10_000, seed: int = 0):
        """``Evaluation.with_intervals``, after bringing the per-user values to the driver
        (the bootstrap resamples users; the intervals equal the local engine's)."""
        return Evaluation.with_intervals(self.collect_values(), level, rounds, seed)

    def by_segment(self, segments: Any, by, fmt: str | None = None,
                   reading: dict[str, Any] | None = None, bins: str | int | None = None):
        """``Evaluation.by_segment`` on the cluster: the user table (a path or table read on
        this machine: one row per user) is joined to the per-user values there; means are
        sums over counts, as locally (to within the rounding of the sum's order)."""
        from rankeval.analysis.segments import table_labels, with_bins
        from rankeval.io.load import open_input

        table = open_input(segments, "segments", fmt, reading)
        users, columns = table_labels(table, with_bins(by, bins))
        words = list(columns)
        labels = pa.table({"user_id": users, **{f"_seg{j}": pa.array(
            columns[w][0].astype(str), pa.string()) for j, w in enumerate(words)}})
        spark = self.frame.sparkSession
        joined = self.frame.join(spark.createDataFrame(labels), "user_id", "left")
        return dataclasses.replace(self, segments={
            w: _segment_means(joined, f"_seg{j}", columns[w][1], self.corpus)
            for j, w in enumerate(words)})

    def __repr__(self) -> str:
        return super().__repr__().replace("<Evaluation", "<SparkEvaluation", 1)


def _segment_means(joined, column: str, rank, corpus) -> list:
    """One ``Segment`` per label of ``column`` (``(missing)``: users not in the table)."""
    from pyspark.sql import functions as F

    from rankeval.analysis.segments import MISSING, Segment, ordered_values

    metrics = [c for c in joined.columns if c != "user_id" and not c.startswith("_seg")
               and c not in corpus]
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


def _umask_modes(folder: Path) -> None:
    """Hadoop's local filesystem writes with its own umask (022), not the process's: give
    the dataset the modes any other output of the command gets."""
    mask = os.umask(0)
    os.umask(mask)
    folder.chmod(0o777 & ~mask)
    for f in folder.iterdir():
        f.chmod((0o777 if f.is_dir() else 0o666) & ~mask)


def check_dataset_path(path: str) -> None:
    """A local per-user dataset path: absent, or an earlier Parquet dataset (part files and
    Spark's markers only), so that replacing it destroys nothing else."""
    target = Path(path)
    if not target.exists():
        if not target.absolute().parent.is_dir():
            raise OptionError(f"--per-user {path}: the directory {target.absolute().parent} "
                              "does not exist")
        return
    if not target.is_dir():
        raise OptionError(f"--per-user {path}: is a file; with the Spark engine the per-user "
                          "values are a Parquet dataset: give a directory")
    others = [f.name for f in target.iterdir() if not _dataset_file(f.name)]
    if others:
        raise OptionError(f"--per-user {path}: holds other files ({', '.join(others[:3])}); "
                          "give a new directory or an earlier per-user dataset")


def _dataset_file(name: str) -> bool:
    name = name.removeprefix(".").removesuffix(".crc")
    return name == "_SUCCESS" or (name.startswith("part-") and name.endswith(".parquet"))


def merged_errors(results) -> list[InputError]:
    """Every task's input errors as one list: the same problem in several chunks is one
    error with the counts added and the examples of the smallest user ids (each chunk sends
    its first five, in user order). Problems keep the order in which checks meet them."""
    merged: dict[tuple, dict] = {}
    order: dict[tuple, int] = {}
    for result in results:
        for i, e in enumerate(result.errors):
            key = (e["path"], e["column"], e["problem"], e["hint"], e["unit"])
            order[key] = min(order.get(key, i), i)
            if key not in merged:
                merged[key] = dict(e, examples=list(e["examples"]))
                continue
            m = merged[key]
            m["count"] = None if m["count"] is None or e["count"] is None else (
                m["count"] + e["count"])
            m["examples"] += e["examples"]
    return [InputError(m["path"], m["problem"], column=m["column"], count=m["count"],
                       examples=_examples(m), hint=m["hint"], unit=m["unit"])
            for m in (merged[k] for k in sorted(merged, key=order.__getitem__))]


def _examples(error: dict) -> list[tuple]:
    if error["unit"] != "row of user":
        return error["examples"][:5]
    first = sorted(error["examples"], key=lambda x: x[0])[:5]
    return [(repr(user), value) for user, value in first]
