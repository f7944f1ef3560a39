"""Item statistics for the beyond-accuracy metrics on Spark: popularity, catalog and predicted
items aggregated on the cluster (one row per item comes back), then ``beyond.stats_from``
as locally, so every partition scores against the same statistics."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.items import ItemStats, ItemTally, ItemVectors, stats_from
from rankeval.engines.spark.frames import check_id_type, quoted
from rankeval.errors import InputError
from rankeval.io.arrow import to_numpy
from rankeval.io.columns import EXTRA, resolve_role
from rankeval.results.evaluation import InputSummary
from rankeval.settings import Settings


@dataclass(frozen=True)
class SparkExtras:
    """``--train`` and ``--catalog`` as (DataFrame, label, format), ``--item-features``
    loaded on this machine (vectors are sent to every task)."""

    train: tuple | None = None
    catalog: tuple | None = None
    item_features: Any = None
    item_groups: Any = None  # --item-groups, loaded on this machine
    propensity: Any = None  # --propensity, loaded on this machine
    exclude: Any = None  # --exclude: refused by the engine before it starts (never set)

    def given(self) -> set[str]:
        return {n for n in EXTRA if getattr(self, n) is not None}


def item_stats(preds, extras: SparkExtras, settings: Settings, columns) -> tuple[ItemStats | None,
                                                                        dict[str, InputSummary]]:
    """(the statistics, summaries of --train and --catalog for the report); the statistics
    are None when no extra input is given."""
    if not extras.given():
        return None, {}
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    overrides = {c: v for c, v in columns.items() if v}
    p_item = resolve_role(list(preds[0].columns), "predictions", overrides, preds[1])["item"]
    assert p_item is not None  # required: resolve_role raises without it
    parts = [_items(preds[0], p_item, preds[1]).withColumn("predicted", F.lit(True))]
    summaries, n_users = {}, 0
    if extras.train is not None:
        df, label, fmt = extras.train
        names = resolve_role(list(df.columns), "train", overrides, label)
        parts.append(_popularity(df, names, label, settings.popularity))
        user = names["user"]
        assert user is not None  # required: resolve_role raises without it
        counts = df.agg(F.count(F.lit(1)).alias("rows"),
                        F.countDistinct(F.col(quoted(user)).cast("string"))
                        .alias("users")).collect()[0]
        n_users = int(counts["users"])
        summaries["train"] = InputSummary(label, fmt, int(counts["rows"]), n_users)
    if extras.catalog is not None:
        df, label, fmt = extras.catalog
        item = resolve_role(list(df.columns), "catalog", overrides, label)["item"]
        assert item is not None  # required: resolve_role raises without it
        summaries["catalog"] = InputSummary(label, fmt, _check_catalog(df, item, label), 0)
        parts.append(_items(df, item, label).withColumn("in_catalog", F.lit(True)))
    joined = functools.reduce(lambda a, b: a.join(b, "item", "full_outer"), parts)
    table = joined.toArrow()
    table = table.take(pc.sort_indices(table.column("item")))  # byte order, as factorize's
    vectors = None if extras.item_features is None else ItemVectors.of(extras.item_features)
    stats = stats_from(_tally(table, n_users, extras.catalog is not None), settings, vectors)
    return dataclasses.replace(stats, groups=extras.item_groups,
                               propensity=extras.propensity), summaries


def _items(df, column: str, label: str):
    """The distinct item ids (as text) of a frame; empty ids are left to the checks."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    check_id_type(df, column, label, "item")
    item = F.col(quoted(column)).cast("string")
    return df.select(item.alias("item")).filter(F.col("item").isNotNull()).distinct()


def _popularity(df, names: dict, label: str, popularity: str):
    """Per training item: its distinct users, or its interactions (rows, or summed counts)."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    check_id_type(df, names["item"], label, "item")
    if popularity == "users":
        pop = F.countDistinct(F.col(quoted(names["user"])).cast("string"))
    elif names.get("count"):
        pop = F.sum(F.col(quoted(names["count"])).cast("double"))
    else:
        pop = F.count(F.lit(1))
    item = F.col(quoted(names["item"])).cast("string").alias("item")
    return df.groupBy(item).agg(pop.cast("double").alias("pop"), F.lit(True).alias("trained")
                                ).filter(F.col("item").isNotNull())


def _check_catalog(df, column: str, label: str) -> int:
    """The catalog's rows; empty ids refused as locally (the catalog is not per user, so
    no task checks it)."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    check_id_type(df, column, label, "item")
    item = F.col(quoted(column)).cast("string")
    row = df.agg(F.count(F.lit(1)).alias("rows"),
                 F.count(F.when(item.isNull() | (item == ""), 1)).alias("empty")).collect()[0]
    if row["empty"]:
        raise InputError(label, "empty ids", column=column, count=int(row["empty"]))
    if not row["rows"]:
        raise InputError(label, "no data rows (only a header)")
    return int(row["rows"])


def _tally(table: pa.Table, n_users: int, has_catalog: bool) -> ItemTally:
    # pyarrow-stubs: ChunkedArray.fill_null takes only an Arrow scalar (Array's a Python value);
    # pyarrow converts a Python value for both
    def flags(name: str) -> np.ndarray:
        if name not in table.column_names:
            return np.zeros(table.num_rows, dtype=bool)
        return to_numpy(table.column(name).fill_null(False)).astype(bool)  # type: ignore[arg-type]

    pop = (to_numpy(table.column("pop").fill_null(0.0)).astype(np.float64)  # type: ignore[arg-type]
           if "pop" in table.column_names else np.zeros(table.num_rows))
    return ItemTally(ids=table.column("item").combine_chunks(), predicted=flags("predicted"),
                     trained=flags("trained"), catalog=flags("in_catalog") if has_catalog
                     else None, pop=pop, n_train_users=n_users)
