"""Spark DataFrames in: paths read by Spark, columns resolved as locally, every input in one
frame partitioned by user."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rankeval.engines.distributed.chunks import KEY, ROWS, SEQ, SIDE, Layout
from rankeval.errors import InputError, OptionError
from rankeval.io.columns import resolve_role
from rankeval.io.formats import ALIASES, EXTENSIONS, FORMATS
from rankeval.io.readers import for_role

# What Spark reads itself (a JSON dict of dicts is a file of one machine).
SPARK_FORMATS = tuple(f.name for f in FORMATS.values() if f.spark)
# Types whose text Spark and Arrow write alike (users are partitioned by that text).
_ID_TYPES = ("StringType", "LongType", "IntegerType", "ShortType", "ByteType")


def spark_format(path: str, explicit: str | None, flag: str) -> str:
    """The format of a path Spark reads: ``explicit``, else the extension of the path, of a
    glob, or of the files in a local directory; Parquet when nothing says."""
    fmt: str | None
    if explicit:
        fmt = ALIASES.get(explicit.lower(), explicit.lower())
    else:
        fmt = _extension(path)
        if fmt is None and os.path.isdir(path):
            found = {_extension(f.name) for f in Path(path).iterdir()
                     if not f.name.startswith(("_", "."))} - {None}
            fmt = found.pop() if len(found) == 1 else None
        fmt = fmt or "parquet"
    if fmt not in SPARK_FORMATS:
        raise OptionError(f"{flag}: the Spark engine reads {', '.join(SPARK_FORMATS)}; "
                          f"not {fmt} (convert it with 'rankeval convert')")
    return fmt


def _extension(name: str) -> str | None:
    suffixes = [s.lower() for s in Path(name.rstrip("/")).suffixes if s.lower() != ".gz"]
    return EXTENSIONS.get(suffixes[-1]) if suffixes else None


def read(spark, path: str, fmt: str, role: str, reading: dict[str, Any] | None = None):
    """A DataFrame of ``path`` as Spark reads it: text files as strings, so that numbers
    are parsed and checked by rankeval as in a local run."""
    try:
        return FORMATS[fmt].codec().spark_read(spark, path, fmt, role, for_role(reading, role))
    except InputError:
        raise
    except Exception as exc:  # AnalysisException: a missing path, an unreadable file
        raise InputError(path, f"Spark cannot read it as {fmt}: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "desc", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def describe(inputs, columns: dict[str, str | None]) -> tuple[Layout, bool]:
    """(the layout of the combined frame of ``inputs``, each a (DataFrame, label, format):
    predictions, truth[, train]; whether the user ids are compared as text: their types
    differ between inputs)."""
    roles_of = ("predictions", "truth", "train")
    overrides = {c: v for c, v in columns.items() if v}
    named = [{role: name for role, name in resolve_role(list(df.columns), roles_of[side],
                                                        overrides, label).items()
              if name is not None}
             for side, (df, label, _) in enumerate(inputs)]
    types = [df.schema[n["user"]].dataType for (df, _, _), n in zip(inputs, named, strict=True)]
    for (df, label, _), names in zip(inputs, named, strict=True):
        check_id_type(df, names["user"], label, "user")
    sides = tuple({role: (KEY if role == "user" else f"{'ptr'[side]}_{role}", name)
                   for role, name in names.items()} for side, names in enumerate(named))
    layout = Layout(tuple(i[1] for i in inputs), tuple(i[2] for i in inputs), sides)
    return layout, not all(t == types[0] for t in types)


def combine(inputs, columns: dict[str, str | None], partitions: int | None = None,
            ordered: bool = False):
    """(frame, layout): the rows of every input (predictions, truth, and training
    interactions when given; each a (DataFrame, label, format)) as one row per user with
    the list of its rows (with their input order when ``ordered``: the file order
    decides)."""
    from pyspark.sql import functions as F  # optional dependency: rankeval[spark]

    layout, key_text = describe(inputs, columns)
    frames = []
    for side, (df, _, _) in enumerate(inputs):
        # One user column shared by every input, as written when its type is the same in
        # all (Spark hashes equal values alike), else as text everywhere.
        user = F.col(quoted(layout.sides[side]["user"][1]))
        key = user.cast("string") if key_text else user
        frames.append(df.select(
            key.alias(KEY), F.lit(side).cast("byte").alias(SIDE),
            *([F.monotonically_increasing_id().alias(SEQ)] if ordered else []),
            *[F.col(quoted(name)).alias(inner) for inner, name in layout.sides[side].values()
              if inner != KEY]))
    both = frames[0]
    for other in frames[1:]:
        both = both.unionByName(other, allowMissingColumns=True)
    both = both.repartition(partitions, KEY) if partitions else both.repartition(KEY)
    # One row per user with the list of its rows, gathered in each partition after the
    # shuffle (the repartitioning satisfies the grouping: no second shuffle). Measured on
    # 10M rows: 20% less time than sorting each partition by user, and 40% less than letting
    # Spark gather lists before the shuffle (map-side partial aggregation of collect_list).
    # Sending the rows flat instead (each task cutting its partition into users itself) was
    # 14% faster at 10M rows but 13% slower at 200M (122 -> 139 s), even in batches of
    # 500,000 rows: the lists stay.
    rows = [F.col(c) for c in both.columns if c != KEY]
    return both.groupBy(KEY).agg(F.collect_list(F.struct(*rows)).alias(ROWS)), layout


def check_id_type(df, column: str, label: str, what: str) -> None:
    """Ids whose text Spark and Arrow write alike (users are grouped, items looked up by it)."""
    kind = type(df.schema[column].dataType).__name__
    if kind not in _ID_TYPES:
        raise InputError(label, f"{what} ids of type {df.schema[column].dataType.simpleString()}"
                         f": the Spark engine matches {what}s by their text; give them as text "
                         "or integers", column=column)


def is_frame(data: Any) -> bool:
    """A Spark DataFrame, classic or Spark Connect."""
    return type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pyspark")
