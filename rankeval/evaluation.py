"""Moved (#47): ``evaluate`` to ``rankeval.api.evaluate``, ``Evaluation`` and ``InputSummary``
to ``rankeval.results.evaluation``, ``EvaluateOptions`` to ``rankeval.settings``. Kept for the
imports users hold and for evaluations pickled before the move (they name
``rankeval.evaluation.Evaluation``)."""

from rankeval.api.evaluate import evaluate
from rankeval.results.evaluation import Evaluation, InputSummary
from rankeval.settings import EvaluateOptions

__all__ = ["EvaluateOptions", "Evaluation", "InputSummary", "evaluate"]
