"""What the cluster engines' classes share (``DistributedEngine``): the cluster reads paths
(standard input is not one), ``--per-user`` is a dataset the cluster writes, the intent-aware
metrics stay local, per-user values come to the driver on demand, and ``score`` and
``validate`` go the same way: start the cluster, read the inputs there, check what the
metrics need, then score or validate. Each engine gives ``driver()`` (its driver module,
imported when it runs: the class stays light for ``--help``) and the four steps; ``--gold``'s
parts are the driver's."""

from __future__ import annotations

from typing import Any

from rankeval.engines.interface import EXTRA, Engine, Job
from rankeval.errors import InputError, OptionError
from rankeval.io.datasets import check_per_user
from rankeval.io.options import OWN
from rankeval.registry import reads


class DistributedEngine(Engine):
    """An engine whose inputs are read and scored on a cluster (Spark, Ray)."""

    title = ""  # the cluster's name in messages: "Spark"
    in_process = False
    workers = ""  # where the rows go: "Spark's workers"

    def check(self, job: Job) -> None:
        if job.settings.judgment_groups:  # its workers score users, not (user, group) pairs
            raise OptionError(f"{{opt:judgment_groups}} is read by the local engine only: "
                              f"drop --engine {self.name}")
        if job.settings.zscores is not None:  # z-scored where the values are (local)
            raise OptionError(f"{{opt:zscores}} is read by the local engine only: "
                              f"drop --engine {self.name}")
        if "-" in job.paths:
            raise OptionError(f"--engine {self.name} reads paths (files, directories, globs, "
                              "URLs); standard input is not one")
        if job.extras.get("exclude") is not None:  # its workers mask --train's pairs only
            raise OptionError(f"{{opt:exclude}} is read by the local engine only: with "
                              f"--engine {self.name}, mask --train's pairs with "
                              "{opt:exclude_seen}")
        commas = [n for n in ("decimal", *OWN["decimal"].values()) if job.reading.get(n) == ","]
        if commas:  # the cluster's readers take decimal points only
            raise OptionError(f"{{opt:{commas[0]}}} ',' is read by the local engine only: "
                              f"convert the numbers first, or drop --engine {self.name}")

    def check_per_user(self, path: str, inputs: list[str]) -> None:
        """--per-user names a Parquet dataset (a directory), never an input."""
        check_per_user(self.name, path, inputs)

    def score(self, job: Job, progress):
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow

        if reads(job.settings.specs, "subtopics"):
            raise OptionError("the intent-aware metrics (alpha_ndcg, err_ia, ...) run on the "
                              f"local engine: subtopic judgements do not go to {self.workers}")
        progress.stage(f"starting {self.title}")
        cluster = self.start(job)
        progress.stage(f"scoring {label(job.predictions)} and {label(job.truth)} on "
                       f"{self.title}")
        preds, truth, extras = self.read(job, cluster)
        check_needs(job.settings, extras.given())
        return self.evaluate(job, preds, truth, extras)

    def values_here(self, result, progress):
        progress.stage("per-user values to the driver")
        return result.collect()

    def validate(self, job: Job, acknowledged: frozenset[str]):
        from rankeval.engines.validation import Validation  # --help's import cost: numpy
        from rankeval.io.extras import check_needs  # --help's import cost: numpy, pyarrow

        check_needs(job.settings, {n for n in EXTRA if job.extras.get(n) is not None})
        cluster = self.start(job)
        try:
            preds, truth, extras = self.read(job, cluster)
        except InputError as exc:  # unreadable: the report says so, as locally
            return Validation(errors=[exc], acknowledged=acknowledged)
        return self.check_inputs(job, acknowledged, preds, truth, extras)

    def driver(self) -> Any:
        """The engine's driver module (imported when a job runs)."""
        raise NotImplementedError

    def start(self, job: Job) -> Any:
        """The cluster for the job (a session, a client)."""
        raise NotImplementedError

    def read(self, job: Job, cluster: Any) -> tuple[Any, Any, Any]:
        """The predictions, the truth and the extra inputs, as the cluster reads them."""
        raise NotImplementedError

    def evaluate(self, job: Job, preds: Any, truth: Any, extras: Any):
        """Score what ``read`` gave: an ``Evaluation``."""
        raise NotImplementedError

    def check_inputs(self, job: Job, acknowledged: frozenset[str], preds: Any, truth: Any,
                     extras: Any):
        """Validate what ``read`` gave: a ``Validation``."""
        raise NotImplementedError

    def gold_parts(self, store, gold, strata, metrics):
        """The driver's, over the per-user values the cluster keeps."""
        return self.driver().gold_parts(store, gold, strata, metrics)


def label(data: Any) -> str:
    """An input in the progress line: its path, or its type (a DataFrame, a Dataset)."""
    return data if isinstance(data, str) else type(data).__name__
