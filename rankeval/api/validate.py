"""``validate_inputs(predictions, truth, settings, ...)`` -> a ``Validation``: every problem
and every count of two inputs, without scoring them (this machine); ``validate(engine, job,
acknowledged)``: the same on the job's engine, what ``rankeval validate`` runs."""

from __future__ import annotations

from rankeval.engines.interface import Engine, Job
from rankeval.engines.validation import validate_inputs
from rankeval.results.validation import Validation

__all__ = ["Validation", "validate", "validate_inputs"]


def validate(engine: Engine, job: Job, acknowledged: frozenset[str] = frozenset()) -> Validation:
    """``job``'s inputs checked by ``engine`` (its own options first), every problem collected;
    ``acknowledged``: notice codes the user chose, never counted as problems by ``strict``."""
    engine.check(job)
    return engine.validate(job, acknowledged)
