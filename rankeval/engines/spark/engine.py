"""The Spark engine: Spark reads the inputs (files, directories, globs, any filesystem of
the cluster, or DataFrames) and runs the local kernels on complete users per partition;
per-user values stay on the cluster as a DataFrame until asked for (``rankeval.spark``)."""

from __future__ import annotations

from typing import Any, ClassVar

from rankeval.engines.distributed.engine import DistributedEngine
from rankeval.engines.interface import EngineOptions, Job, engine_option
from rankeval.engines.spark.session import session as spark_session
from rankeval.errors import OptionError


class SparkEngine(DistributedEngine):
    name = "spark"
    title, workers = "Spark", "Spark's workers"
    help = ("Apache Spark (inputs read by Spark: Parquet/CSV files, directories, globs, s3a://, "
            "hdfs://; needs rankeval[spark])")
    options: ClassVar[EngineOptions] = {
        "spark_master": engine_option(
            "--spark-master", metavar="URL", help="With --engine spark: the cluster (default: "
            "the active session, SPARK_REMOTE for Spark Connect, else local[*])."),
        "spark_conf": engine_option(
            "--spark-conf", multiple=True, metavar="KEY=VALUE", help="With --engine spark: a "
            "Spark setting (repeatable), e.g. --spark-conf spark.sql.shuffle.partitions=400."),
        "spark_partitioned_by": engine_option(
            "--spark-partitioned-by", metavar="COLUMN", help="With --engine spark: the inputs "
            "are Parquet datasets partitioned by user in COLUMN's directories (bucket=0/, "
            "bucket=1/, ...): each value is scored in one task, with no shuffle."),
    }
    keywords = ("spark", "partitions", "chunk_rows")

    def check(self, job: Job) -> None:
        conf(job.options.get("spark_conf") or ())
        super().check(job)

    def driver(self):
        from rankeval.engines.spark import driver  # --help's import cost: numpy, pyarrow

        return driver

    def start(self, job: Job):
        return session(job.options)

    def read(self, job: Job, cluster):
        driver = self.driver()
        preds, truth = driver.input_frames(job.predictions, job.truth, job.preds_format,
                                           job.truth_format, cluster, job.reading)
        return preds, truth, driver.extra_frames(job.extras, job.columns, cluster, job.reading)

    def evaluate(self, job: Job, preds, truth, extras):
        driver = self.driver()
        return driver.evaluate_frames(preds, truth, job.settings, job.columns,
                                      job.options.get("partitions"),
                                      job.options.get("chunk_rows") or driver.CHUNK_ROWS,
                                      extras, job.options.get("spark_partitioned_by"))

    def check_inputs(self, job: Job, acknowledged: frozenset[str], preds, truth, extras):
        return self.driver().validate_frames(
            preds, truth, job.settings, job.columns, acknowledged, extras=extras,
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
