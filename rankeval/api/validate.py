"""``validate_inputs(predictions, truth, settings, ...)`` -> a ``Validation``: every problem
and every count of two inputs, without scoring them (this machine); ``validate(request,
acknowledged)``: the same for a request (``api.request``) on its engine, what ``rankeval
validate`` runs."""

from __future__ import annotations

from rankeval.api.request import Request
from rankeval.engines.validation import validate_inputs
from rankeval.results.validation import Validation

__all__ = ["Validation", "validate", "validate_inputs"]


def validate(request: Request, acknowledged: frozenset[str] = frozenset()) -> Validation:
    """The request's inputs checked by its engine (its options were, when the request was
    built), every problem collected; ``acknowledged``: notice codes the user chose, never
    counted as problems by ``strict``."""
    return request.engine.validate(request.job, acknowledged)
