"""MLflow: an evaluation's numbers, settings and reports in a tracking store
(``rankeval score --mlflow``, ``Evaluation.log_mlflow()``), and an ``mlflow.evaluate``
evaluator named ``rankeval`` (the ``mlflow.model_evaluator`` entry point).

Metrics are logged under keys MLflow accepts (``ndcg@10`` as ``ndcg_at_10``; the original
names are the tag ``rankeval.metrics``, a JSON map); an undefined value is not logged as a
number (the tag ``rankeval.undefined`` lists it). The settings are params; the JSON report,
the per-user values (Parquet) and, with matplotlib, the HTML report are artifacts under
``rankeval/``. The run is the active one, else a new one in ``MLFLOW_EXPERIMENT_NAME``;
``MLFLOW_TRACKING_URI`` is honoured (MLflow's default: a SQLite file, ``mlflow.db``). MLflow's
usage telemetry stays off unless the user turned it on: rankeval makes no network call that
was not asked for.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rankeval.errors import OptionError

_KEY = re.compile(r"[^\w.\- /:]")


def _mlflow():
    try:
        import mlflow
    except ImportError:
        raise OptionError("MLflow logging needs mlflow: pip install 'rankeval[mlflow]' (from "
                          "this checkout: pip install -e '.[mlflow]')") from None
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    return mlflow


def metric_keys(names: list[str]) -> dict[str, str]:
    """Each metric name as a key MLflow accepts: ``ndcg@10`` -> ``ndcg_at_10``,
    ``ee_l(p=0.8)@all`` -> ``ee_l_p_0.8_at_all``; distinct names stay distinct."""
    out: dict[str, str] = {}
    for name in names:
        key = _KEY.sub("_", name.replace("@", "_at_")).strip("_")
        key = re.sub(r"_+", "_", key)
        base, n = key, 2
        while key in out.values():
            key, n = f"{base}_{n}", n + 1
        out[name] = key
    return out


def params(ev) -> dict[str, str]:
    """The settings as MLflow params (text, each at most 500 characters as MLflow stores)."""
    return {name: (value if isinstance(value, str) else json.dumps(value))[:500]
            for name, value in ev.to_dict()["settings"].items()}


def log_evaluation(ev, run_id: str | None = None, artifacts: bool = True,
                   prefix: str = "") -> str:
    """Log ``ev`` to MLflow (``run_id``: that run; else the active run, else a new one) and
    return the run's id."""
    mlflow = _mlflow()
    active = mlflow.active_run()
    if active is not None and run_id in (None, active.info.run_id):
        context: Any = nullcontext(active)
    else:
        context = mlflow.start_run(run_id=run_id)  # that run, or a new one
    with context as run:
        keys = metric_keys(list(ev.metrics))
        defined = {keys[m]: float(v) for m, v in ev.metrics.items()
                   if v is not None and math.isfinite(v)}
        mlflow.log_metrics({prefix + k: v for k, v in defined.items()})
        mlflow.log_params({prefix + k: v for k, v in params(ev).items()})
        mlflow.set_tag(f"{prefix}rankeval.metrics",
                       json.dumps({prefix + keys[m]: m for m in ev.metrics}))
        undefined = [m for m in ev.metrics if prefix + keys[m] not in
                     {prefix + k for k in defined}]
        if undefined:
            mlflow.set_tag(f"{prefix}rankeval.undefined", json.dumps(undefined))
        if artifacts:
            _log_reports(mlflow, ev)
        return run.info.run_id


def _log_reports(mlflow, ev) -> None:
    """The JSON report; the per-user values and (with matplotlib) the HTML report when the
    values are on this machine (the Spark engine keeps them on the cluster)."""
    from rankeval.report import json as json_report

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "rankeval"
        folder.mkdir()
        (folder / "report.json").write_text(json_report.render(ev), encoding="utf-8")
        if ev.store.here:
            import pyarrow.parquet as pq

            pq.write_table(ev.per_user_table(), folder / "per_user.parquet")
        from rankeval.report import charts

        if ev.store.here and charts.available():  # the report extra is optional
            from rankeval.report import html

            (folder / "report.html").write_text(html.render(ev), encoding="utf-8")
        mlflow.log_artifacts(str(folder), artifact_path="rankeval")
