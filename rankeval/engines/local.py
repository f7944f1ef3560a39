"""The local engine: this process reads the inputs (files, standard input, in-memory
tables) and scores them with the numpy kernels."""

from __future__ import annotations

from rankeval.engines.interface import Engine, Job
from rankeval.errors import plural
from rankeval.registry import reads


class LocalEngine(Engine):
    name = "local"
    help = "this machine"

    def score(self, job: Job, progress):
        from rankeval.engines.finish import evaluate_inputs  # --help's import cost: numpy, pyarrow
        from rankeval.engines.groups import (
            check_extras,  # --help's import cost: numpy, pyarrow
            check_repeats,
        )
        from rankeval.io.extras import load_extras  # --help's import cost: numpy, pyarrow
        from rankeval.io.judgment_groups import (
            load_grouped,  # --help's import cost: numpy, pyarrow
            split,
        )
        from rankeval.io.load import load_inputs  # --help's import cost: numpy, pyarrow

        x = job.extras
        progress.stage(f"reading {_label(job.predictions)} and {_label(job.truth)}")
        groups = None
        if job.settings.judgment_groups:
            check_extras(x)
            run, judged, group = load_grouped(job.predictions, job.truth, job.columns,
                                              job.preds_format, job.truth_format, job.reading)
            check_repeats(run, judged, group, job.settings)  # named by the files' own rows
            run, judged, groups = split(run, judged, group)
        else:
            run, judged = load_inputs(job.predictions, job.truth, job.columns,
                                      job.preds_format, job.truth_format, job.reading,
                                      subtopics=reads(job.settings.specs, "subtopics"))
        extras = load_extras(x, job.columns, job.reading)
        progress.stage(f"scoring {plural(run.source.rows, 'prediction')}")
        return evaluate_inputs(run, judged, job.settings, extras, release=True, groups=groups)

    def validate(self, job: Job, acknowledged: frozenset[str]):
        # --help's import cost: numpy, pyarrow
        from rankeval.engines.validation import validate_inputs

        return validate_inputs(job.predictions, job.truth, job.settings,
                               preds_format=job.preds_format, truth_format=job.truth_format,
                               columns=job.columns, acknowledged=acknowledged,
                               reading=job.reading, extra=job.extras)


def _label(data) -> str:
    return data if isinstance(data, str) else type(data).__name__
