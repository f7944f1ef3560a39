"""The Ray engine: Ray Data reads the inputs (Parquet/CSV files, directories, globs, object
stores, or Ray Datasets), tasks bring each user's rows together and run the local kernels on
them; per-user values stay in the object store until asked for (``rankeval.ray``)."""

from __future__ import annotations

from typing import Any, ClassVar

from rankeval.engines.interface import EXTRA, Engine, Job
from rankeval.errors import InputError, OptionError
from rankeval.registry import reads


class RayEngine(Engine):
    name = "ray"
    help = ("Ray (inputs read by Ray Data: Parquet/CSV files, directories, globs, s3://, "
            "gs://; needs rankeval[ray])")
    options: ClassVar[dict[str, tuple[tuple[str, ...], dict[str, Any]]]] = {
        "ray_address": (("--ray-address",), dict(
            metavar="URL", help="With --engine ray: a running cluster (ray://host:10001, "
            "auto; default: RAY_ADDRESS, else a local Ray started for the run).")),
    }
    # the library's: partitions of users (default: one per CPU of the cluster)
    keywords: ClassVar[tuple[str, ...]] = ("partitions",)

    def check(self, job: Job) -> None:
        if "-" in job.paths:
            raise OptionError("--engine ray reads paths (files, directories, globs, URLs); "
                              "standard input is not one")

    def check_per_user(self, path: str, inputs: list[str]) -> None:
        """--per-user names a Parquet dataset (a directory), never an input."""
        from rankeval.io.datasets import check_per_user

        check_per_user(self.name, path, inputs)

    def score(self, job: Job, progress):
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow
        from rankeval.ray import evaluate_inputs, init, read_inputs
        from rankeval.ray.items import extra_inputs

        if reads(job.settings.specs, "subtopics"):
            raise OptionError("the intent-aware metrics (alpha_ndcg, err_ia, ...) run on the "
                              "local engine: subtopic judgements do not go to Ray's tasks")
        progress.stage("starting Ray")
        init(job.options.get("ray_address"))
        progress.stage(f"scoring {_label(job.predictions)} and {_label(job.truth)} on Ray")
        preds, truth = read_inputs(job.predictions, job.truth, job.preds_format,
                                   job.truth_format, job.reading)
        extras = extra_inputs(job.extras, job.columns, job.reading)
        check_needs(job.settings, extras.given())
        return evaluate_inputs(preds, truth, job.settings, job.columns,
                               job.options.get("partitions"), extras)

    def values_here(self, result, progress):
        progress.stage("per-user values to the driver")
        return result.collect()

    def validate(self, job: Job, acknowledged: frozenset[str]):
        # --help's import cost: numpy, pyarrow
        from rankeval.engines.validation import Validation
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow
        from rankeval.ray import init, read_inputs, validate_inputs
        from rankeval.ray.items import extra_inputs

        check_needs(job.settings, {n for n in EXTRA if job.extras.get(n) is not None})
        init(job.options.get("ray_address"))
        try:
            preds, truth = read_inputs(job.predictions, job.truth, job.preds_format,
                                       job.truth_format, job.reading)
            extras = extra_inputs(job.extras, job.columns, job.reading)
        except InputError as exc:  # unreadable: the report says so, as locally
            return Validation(errors=[exc], acknowledged=acknowledged)
        return validate_inputs(preds, truth, job.settings, job.columns, acknowledged,
                               job.options.get("partitions"), extras)


def _label(data) -> str:
    return data if isinstance(data, str) else type(data).__name__
