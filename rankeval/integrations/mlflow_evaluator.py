"""The ``rankeval`` evaluator of ``mlflow.models.evaluate`` (``mlflow.evaluate`` before MLflow
3; entry point ``mlflow.model_evaluator``):

    mlflow.models.evaluate(data=df, predictions="score", targets="relevance",
                           model_type="ranking", evaluators=["rankeval"],
                           evaluator_config={"rankeval": {"metrics": "ndcg,recall", "k": [10]}})

``data`` holds one row per (user, item): the user and item columns (``user_col``,
``item_col`` in the config; default ``user_id``, ``item_id``), the model's score
(``predictions``, or a model whose ``predict`` scores the rows) and the relevance
(``targets``; or a separate ``truth`` table in the config, any input ``rankeval.evaluate``
reads). Every other config key is a setting of ``rankeval.evaluate`` (``gain``, ``ties`` ...).
The metrics, settings and reports are logged to the evaluation's run as
``Evaluation.log_mlflow`` logs them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from mlflow.models.evaluation.base import EvaluationResult, ModelEvaluator

from rankeval.api.evaluate import evaluate
from rankeval.integrations.mlflow import log_evaluation, metric_keys

MODEL_TYPE = "ranking"


class RankevalEvaluator(ModelEvaluator):
    name = "rankeval"

    @classmethod
    def can_evaluate(cls, *, model_type, evaluator_config, **kwargs) -> bool:
        return model_type == MODEL_TYPE

    def evaluate(self, *, model_type, dataset, run_id, evaluator_config, model=None,
                 extra_metrics=None, custom_artifacts=None, predictions=None,
                 **kwargs) -> EvaluationResult:
        config: dict[str, Any] = dict(evaluator_config or {})
        user, item = config.pop("user_col", "user_id"), config.pop("item_col", "item_id")
        truth = config.pop("truth", None)
        rows = dataset.features_data
        scores = dataset.predictions_data
        if scores is None:
            if model is None:
                raise ValueError("rankeval: give predictions (a column of data) or a model")
            scores = model.predict(rows)
        run = pd.DataFrame({"user_id": list(rows[user]), "item_id": list(rows[item]),
                            "score": list(scores)})
        if truth is None:
            if dataset.labels_data is None:
                raise ValueError("rankeval: give targets (the relevance column of data) or "
                                 "a truth table in evaluator_config['truth']")
            truth = pd.DataFrame({"user_id": run.user_id, "item_id": run.item_id,
                                  "relevance": list(dataset.labels_data)})
        ev = evaluate(run, truth, **config)
        log_evaluation(ev, run_id=run_id)
        keys = metric_keys(list(ev.metrics))
        return EvaluationResult(metrics={keys[m]: v for m, v in ev.metrics.items()
                                         if v == v}, artifacts={})
