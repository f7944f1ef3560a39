"""The one pipeline after scoring, for every engine, the command line and the library: the
distribution over users, segments, the values brought here when wanted, and intervals."""

from __future__ import annotations

import sys

from rankeval.engines.interface import Engine, Job
from rankeval.engines.progress import Stages
from rankeval.engines.progress import wanted as progress_wanted


def run(engine: Engine, job: Job):
    """The one pipeline: read and score on ``engine``, then the distribution over users,
    segments, the values brought here when wanted, and intervals."""
    with Stages(sys.stderr, enabled=progress_wanted(sys.stderr, job.quiet)) as progress:
        result = engine.score(job, progress)
        if job.stats:
            result = result.with_stats(job.stats)
        if job.segments is not None:
            progress.stage(f"segments from {job.segments}")
            level, rounds, seed = job.intervals or (0.95, 2000, 0)
            result = result.by_segment(job.segments, job.segment_by, reading=job.reading,
                                       gaps=True if job.gaps else None, level=level,
                                       rounds=min(rounds, 2000), seed=seed)
        if job.intervals is not None or job.keep_values:
            result = engine.values_here(result, progress)
        if job.intervals is not None:
            progress.stage("bootstrapping confidence intervals")
            result = result.with_intervals(*job.intervals)
    return result
