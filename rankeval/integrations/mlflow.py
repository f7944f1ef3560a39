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

A failure is one ``IntegrationError`` naming the store and the cause, after a bounded wait:
a database store is opened once before MLflow's own retries (about 100 s of them), and a
tracking server gets ``HTTP_DEFAULTS`` (MLflow's own variables) for the call, unless the user
set them.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankeval.dependencies import check_versions, install_hint
from rankeval.errors import OptionError, RankevalError
from rankeval.integrations.support import (
    failure,
    held_logs,
    scoped_env,
    shown_uri,
)

if TYPE_CHECKING:
    from rankeval.integrations.tracked import Tracked

_KEY = re.compile(r"[^\w.\- /:]")
# MLflow's defaults retry a tracking server for minutes (7 retries, backoff factor 2, 120 s a
# request): a few seconds here, unless the user set them.
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
                 "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
                 "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
# The stores MLflow keeps in a database through SQLAlchemy (the scheme before any "+driver")
_DATABASES = ("sqlite", "postgresql", "mysql", "mssql")


def require():
    """mlflow imported, its release checked against the tested range; not installed:
    an ``OptionError`` naming the extra to install."""
    try:
        import mlflow  # optional dependency (rankeval[mlflow])
    except ImportError:
        raise OptionError(f"MLflow logging needs mlflow: {install_hint('mlflow')}") from None
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    check_versions("mlflow")
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
    from rankeval.integrations.tracked import tracked  # --help's import cost: numpy, pyarrow

    return tracked(ev).params


def log_evaluation(ev, run_id: str | None = None, artifacts: bool = True,
                   prefix: str = "") -> str:
    """Log ``ev`` to MLflow (``run_id``: that run; else the active run, else a new one) and
    return the run's id. Any failure of MLflow's is an ``IntegrationError``: one line naming
    the store and the cause."""
    mlflow = require()
    uri = mlflow.get_tracking_uri()
    store = shown_uri(uri)
    try:
        with scoped_env(HTTP_DEFAULTS), held_logs("mlflow", "alembic"):
            _open_database(uri)
            return _log(mlflow, ev, run_id, artifacts, prefix)
    except RankevalError:
        raise
    except Exception as exc:  # MLflow's, SQLAlchemy's, requests', the OS's: one line each
        raise failure("MLflow", store, exc) from exc


def _open_database(uri: str) -> None:
    """A database store opened once: MLflow retries a store it cannot open for about 100 s
    (10 attempts, doubling sleeps; no setting changes that), where the first attempt already
    says why (a read-only folder, a server not there)."""
    scheme = uri.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in _DATABASES:
        return
    # optional dependency: sqlalchemy, the mlflow extra's
    import sqlalchemy  # the mlflow extra's

    url = sqlalchemy.engine.make_url(uri)
    path = url.database or ""
    if scheme == "sqlite" and path and not path.startswith("file:") and path != ":memory:" \
            and not Path(path).parent.is_dir():
        return  # MLflow makes the folder first
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")
    finally:
        engine.dispose()


def _log(mlflow, ev, run_id: str | None, artifacts: bool, prefix: str) -> str:
    active = mlflow.active_run()
    if active is not None and run_id in (None, active.info.run_id):
        context: Any = nullcontext(active)
    else:
        context = mlflow.start_run(run_id=run_id)  # that run, or a new one
    from rankeval.integrations.tracked import tracked  # --help's import cost: numpy, pyarrow

    with context as run:
        logged = tracked(ev)
        values = logged.metrics
        keys = metric_keys(list(values))
        defined = {keys[m]: float(v) for m, v in values.items()
                   if v is not None and math.isfinite(v)}
        mlflow.log_metrics({prefix + k: v for k, v in defined.items()})
        mlflow.log_params({prefix + k: v for k, v in logged.params.items()})
        mlflow.set_tag(f"{prefix}rankeval.metrics",
                       json.dumps({prefix + keys[m]: m for m in values}))
        undefined = [m for m in values if prefix + keys[m] not in
                     {prefix + k for k in defined}]
        if undefined:
            mlflow.set_tag(f"{prefix}rankeval.undefined", json.dumps(undefined))
        if artifacts:
            _log_reports(mlflow, logged)
        return run.info.run_id


def _log_reports(mlflow, logged: Tracked) -> None:
    """The JSON report; the per-user values and (with matplotlib) the HTML report when the
    values are on this machine (the Spark engine keeps them on the cluster)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "rankeval"
        folder.mkdir()
        (folder / "report.json").write_text(logged.report, encoding="utf-8")
        if logged.per_user is not None:
            import pyarrow.parquet as pq  # --help's import cost: pyarrow

            pq.write_table(logged.per_user, folder / "per_user.parquet")
        from rankeval.report import charts  # --help's import cost: numpy, matplotlib

        if logged.html is not None and charts.available():  # the report extra is optional
            (folder / "report.html").write_text(logged.html(), encoding="utf-8")
        mlflow.log_artifacts(str(folder), artifact_path="rankeval")
