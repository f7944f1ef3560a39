"""The Spark engine: Spark reads the inputs (files, directories, globs, any filesystem of
the cluster, or DataFrames) and runs the local kernels on complete users per partition;
per-user values stay on the cluster as a DataFrame until asked for (``rankeval.spark``).
The class stays light for ``--help``: it imports the driver (pyspark, pyarrow) when it runs."""

from __future__ import annotations

from typing import Any, ClassVar

from rankeval.engines.interface import EXTRA, Engine, Job
from rankeval.engines.spark.session import session as spark_session
from rankeval.errors import InputError, OptionError
from rankeval.io.datasets import check_per_user
from rankeval.registry import reads


class SparkEngine(Engine):
    name = "spark"
    help = ("Apache Spark (inputs read by Spark: Parquet/CSV files, directories, globs, s3a://, "
            "hdfs://; needs rankeval[spark])")
    options: ClassVar[dict[str, tuple[tuple[str, ...], dict[str, Any]]]] = {
        "spark_master": (("--spark-master",), dict(
            metavar="URL", help="With --engine spark: the cluster (default: the active "
            "session, SPARK_REMOTE for Spark Connect, else local[*]).")),
        "spark_conf": (("--spark-conf",), dict(
            multiple=True, metavar="KEY=VALUE", help="With --engine spark: a Spark setting "
            "(repeatable), e.g. --spark-conf spark.sql.shuffle.partitions=400.")),
        "spark_partitioned_by": (("--spark-partitioned-by",), dict(
            metavar="COLUMN", help="With --engine spark: the inputs are Parquet datasets "
            "partitioned by user in COLUMN's directories (bucket=0/, bucket=1/, ...): each "
            "value is scored in one task, with no shuffle.")),
    }
    # the library's: a session to use, partitions of users, rows scored at once in a task
    keywords: ClassVar[tuple[str, ...]] = ("spark", "partitions", "chunk_rows")

    def check(self, job: Job) -> None:
        conf(job.options.get("spark_conf") or ())
        if "-" in job.paths:
            raise OptionError("--engine spark reads paths (files, directories, globs, URLs); "
                              "standard input is not one")

    def check_per_user(self, path: str, inputs: list[str]) -> None:
        """--per-user names a Parquet dataset (a directory), never an input."""
        check_per_user(self.name, path, inputs)

    def score(self, job: Job, progress):
        from rankeval.engines.spark.driver import (  # --help's import cost: numpy, pyarrow
            CHUNK_ROWS,
            evaluate_frames,
            extra_frames,
            input_frames,
        )
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow

        if reads(job.settings.specs, "subtopics"):
            raise OptionError("the intent-aware metrics (alpha_ndcg, err_ia, ...) run on the "
                              "local engine: subtopic judgements do not go to Spark's workers")
        progress.stage("starting Spark")
        spark = session(job.options)
        progress.stage(f"scoring {job.predictions} and {job.truth} on Spark")
        preds, truth = input_frames(job.predictions, job.truth, job.preds_format,
                                    job.truth_format, spark, job.reading)
        x = job.extras
        extras = extra_frames(x, job.columns, spark, job.reading)
        check_needs(job.settings, extras.given())
        return evaluate_frames(preds, truth, job.settings, job.columns,
                               job.options.get("partitions"),
                               job.options.get("chunk_rows") or CHUNK_ROWS, extras,
                               job.options.get("spark_partitioned_by"))

    def values_here(self, result, progress):
        progress.stage("per-user values to the driver")
        return result.collect()

    def validate(self, job: Job, acknowledged: frozenset[str]):
        # --help's import cost: the driver loads numpy, pyarrow
        from rankeval.engines.spark.driver import extra_frames, input_frames, validate_frames
        from rankeval.engines.validation import Validation  # --help's import cost: numpy
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow

        check_needs(job.settings, {n for n in EXTRA if job.extras.get(n) is not None})
        spark = session(job.options)
        x = job.extras
        try:
            preds, truth = input_frames(job.predictions, job.truth, job.preds_format,
                                        job.truth_format, spark, job.reading)
            extras = extra_frames(x, job.columns, spark, job.reading)
        except InputError as exc:  # unreadable: the report says so, as locally
            return Validation(errors=[exc], acknowledged=acknowledged)
        return validate_frames(preds, truth, job.settings, job.columns, acknowledged,
                               extras=extras,
                               partitioned_by=job.options.get("spark_partitioned_by"))

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


def session(options: dict[str, Any]):
    """The session for the job: ``spark`` (given), else one on ``spark_master`` with
    ``spark_conf``."""
    if options.get("spark") is not None:
        return options["spark"]
    return spark_session(options.get("spark_master"), conf(options.get("spark_conf") or ()))
