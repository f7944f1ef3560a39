"""The Ray engine: Ray Data reads the inputs (Parquet/CSV files, directories, globs, object
stores, or Ray Datasets), tasks bring each user's rows together and run the local kernels on
them; per-user values stay in the object store until asked for (``rankeval.ray``)."""

from __future__ import annotations

from typing import ClassVar

from rankeval.engines.distributed.engine import DistributedEngine
from rankeval.engines.interface import EngineOptions, Job, engine_option


class RayEngine(DistributedEngine):
    name = "ray"
    title, workers = "Ray", "Ray's tasks"
    help = ("Ray (inputs read by Ray Data: Parquet/CSV files, directories, globs, s3://, "
            "gs://; needs rankeval[ray])")
    options: ClassVar[EngineOptions] = {"ray_address": engine_option(
        "--ray-address", metavar="URL", help="With --engine ray: a running cluster "
        "(ray://host:10001, auto; default: RAY_ADDRESS, else a local Ray started for the run).")}
    keywords = ("partitions",)  # the library's: partitions of users (default: one per CPU)

    def driver(self):
        from rankeval.engines.ray import driver  # --help's import cost: numpy, pyarrow

        return driver

    def start(self, job: Job):
        return self.driver().init(job.options.get("ray_address"))

    def read(self, job: Job, cluster):
        driver = self.driver()
        preds, truth = driver.read_inputs(job.predictions, job.truth, job.preds_format,
                                          job.truth_format, job.reading)
        return preds, truth, driver.extra_inputs(job.extras, job.columns, job.reading)

    def evaluate(self, job: Job, preds, truth, extras):
        return self.driver().evaluate_inputs(preds, truth, job.settings, job.columns,
                                             job.options.get("partitions"), extras)

    def check_inputs(self, job: Job, acknowledged: frozenset[str], preds, truth, extras):
        return self.driver().validate_inputs(preds, truth, job.settings, job.columns,
                                             acknowledged, job.options.get("partitions"),
                                             extras)
