"""``--engine spark`` for ``score`` and ``validate``: option checks before any work, the
session, and the per-user Parquet dataset."""

from __future__ import annotations

from typing import Any

from ..errors import OptionError


def check(engine: dict[str, Any], inputs: list[str]) -> None:
    """Before reading: the Spark options only with --engine spark, and paths for it."""
    if engine["engine"] != "spark":
        for name, flag in (("master", "--spark-master"), ("conf", "--spark-conf")):
            if engine[name]:
                raise OptionError(f"{flag} needs --engine spark")
        return
    conf(engine["conf"])
    if "-" in inputs:
        raise OptionError("--engine spark reads paths (files, directories, globs, URLs); "
                          "standard input is not one")


def conf(pairs) -> list[tuple[str, str]]:
    """--spark-conf KEY=VALUE pairs."""
    out = []
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise OptionError(f"--spark-conf {pair!r}: expected KEY=VALUE, e.g. "
                              "spark.sql.shuffle.partitions=400")
        out.append((key.strip(), value))
    return out


def session(engine: dict[str, Any]):
    from ..spark import session as spark_session

    return spark_session(engine["master"], conf(engine["conf"]))


def check_dataset(path: str, inputs: list[str]) -> None:
    """--per-user with --engine spark names a Parquet dataset (a directory), not an input."""
    from ..io.output import check_distinct
    from ..spark.result import check_dataset_path

    if path == "-":
        raise OptionError("--per-user - : with --engine spark the per-user values stay on the "
                          "cluster; give a directory for a Parquet dataset")
    if "://" not in path:
        check_dataset_path(path)
    check_distinct({"--per-user": path}, inputs)


def evaluate(predictions: str, truth: str, settings, columns, reading, kw, engine,
             segment_by=(), extra=None):
    """Read both paths with Spark and score them there."""
    import sys

    from ..progress import Stages
    from ..progress import wanted as progress_wanted
    from ..spark import evaluate_frames, extra_frames, input_frames

    with Stages(sys.stderr, enabled=progress_wanted(sys.stderr, kw["quiet"])) as progress:
        progress.stage("starting Spark")
        spark = session(engine)
        progress.stage(f"scoring {predictions} and {truth} on Spark")
        both = input_frames(predictions, truth, kw["preds_format"], kw["truth_format"], spark,
                      reading)
        extra = extra or {}
        extras = extra_frames(extra.get("train"), extra.get("catalog"),
                              extra.get("item_features"), columns, extra, spark, reading)
        result = evaluate_frames(*both, settings, columns, extras=extras)
        if kw["stats"]:
            progress.stage("distributions over users on Spark")
            result = result.with_stats(kw["stats"])
        if kw["segments"] is not None:
            progress.stage(f"segments from {kw['segments']} on Spark")
            result = result.by_segment(kw["segments"], segment_by, reading=reading)
        if kw["intervals"] or kw["html"] or kw["per_query"]:  # they need every value here
            progress.stage("per-user values to the driver")
            result = result.collect_values()
        if kw["intervals"]:
            progress.stage("bootstrapping confidence intervals")
            result = result.with_intervals(kw["confidence"], kw["rounds"], kw["seed"])
        return result


def validate(predictions: str, truth: str, settings, columns, reading, kw, engine,
             acknowledged, extra):
    """Check both paths with Spark: ``rankeval validate``'s report."""
    from ..errors import InputError
    from ..spark import extra_frames, input_frames, validate_frames
    from ..validate import Validation

    spark = session(engine)
    try:
        both = input_frames(predictions, truth, kw["preds_format"], kw["truth_format"], spark,
                      reading)
        extras = extra_frames(extra.get("train"), extra.get("catalog"),
                              extra.get("item_features"), columns, extra, spark, reading)
    except InputError as exc:  # unreadable: the report says so, as locally
        return Validation(errors=[exc], acknowledged=acknowledged)
    return validate_frames(*both, settings, columns, acknowledged, extras=extras)
