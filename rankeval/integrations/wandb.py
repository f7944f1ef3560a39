"""Weights & Biases: an evaluation's metrics, settings and per-user values in a W&B run
(``rankeval score --wandb``, ``Evaluation.log_wandb()``).

The metrics go to the run's summary under their own names (``ndcg@10``); an undefined value
is not logged as a number (the summary's ``rankeval/undefined`` lists it). The settings go
to the run's config, the per-user values to a table ``rankeval/per_user`` (when they are on
this machine). The run is the active one, else a new one (``WANDB_PROJECT``, default
``rankeval``; job type ``evaluation``) that is finished once logged. ``WANDB_MODE`` is
honoured; without it and without ``WANDB_API_KEY`` the run is offline: written to the run
directory (``WANDB_DIR``), never sent anywhere.

A run rankeval started is complete when rankeval returns: ``run.finish()`` waits for the run's
last record to be handled, but W&B's service writes the run's file (``run-ID.wandb``) out when
it closes the run's stream, after ``finish`` has returned (wandb 0.31 buffers that file); so
rankeval then shuts the service down (``wandb.teardown()``, which waits for it), unless
another run of the process still uses it. A failure is one ``IntegrationError`` naming the
store and the cause; ``wandb.init`` gives up after 15 seconds (W&B's default: 90), unless
``WANDB_INIT_TIMEOUT`` says otherwise (``ENV_DEFAULTS``, set for the call only).
"""

from __future__ import annotations

import math
import os
from contextlib import suppress
from typing import Any

from rankeval.dependencies import check_versions, install_hint
from rankeval.errors import OptionError, RankevalError
from rankeval.integrations.support import failure, scoped_env, shown_uri

# For rankeval's own run, unless the user set them: wandb.init gives up after 15 s (W&B's
# default: 90 s), and W&B's console lines stay out of rankeval's output (rankeval names the run)
ENV_DEFAULTS = {"WANDB_INIT_TIMEOUT": "15", "WANDB_SILENT": "true"}


def require():
    """wandb imported, its release checked against the tested range; not installed:
    an ``OptionError`` naming the extra to install."""
    try:
        import wandb  # optional dependency (rankeval[wandb])
    except ImportError:
        raise OptionError(f"W&B logging needs wandb: {install_hint('wandb')}") from None
    check_versions("wandb")
    return wandb


def _mode() -> str | None:
    return os.environ.get("WANDB_MODE") or (
        None if os.environ.get("WANDB_API_KEY") else "offline")


def _store(run: Any) -> str:
    """Where the run goes: the given run, the offline folder, or the W&B server."""
    if run is not None:
        return f"W&B run {getattr(run, 'id', '?')}"
    if _mode() in ("offline", "dryrun"):
        return f"an offline run under {os.environ.get('WANDB_DIR') or os.getcwd()}"
    return shown_uri(os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai")


def log_evaluation(ev, run: Any = None) -> str:
    """Log ``ev`` to ``run`` (a W&B run), the active run, or a new one; returns its id. Any
    failure of W&B's is an ``IntegrationError``: one line naming the store and the cause."""
    wandb = require()
    own = run is None and wandb.run is None
    run = run if run is not None else wandb.run
    store = _store(run)
    try:
        if own:
            with scoped_env(ENV_DEFAULTS):
                run = wandb.init(project=os.environ.get("WANDB_PROJECT", "rankeval"),
                                 job_type="evaluation", mode=_mode())
        run_id = _log(wandb, run, ev)
        if own:
            run.finish()
            _shut_down(wandb)
    except RankevalError:
        raise
    except Exception as exc:  # W&B's, pydantic's (its settings), the OS's: one line each
        if own:  # cleaning up after the failure, which is the one to report
            with suppress(Exception):
                if run is not None:
                    run.finish(exit_code=1)
            with suppress(Exception):
                _shut_down(wandb)
        raise failure("W&B", store, exc) from exc
    return run_id


def _log(wandb, run, ev) -> str:
    from rankeval.integrations.tracked import tracked  # --help's import cost: numpy, pyarrow

    logged = tracked(ev)
    run.config.update({f"rankeval/{k}": v for k, v in logged.params.items()},
                      allow_val_change=True)
    undefined = []
    for name, value in logged.metrics.items():
        if value is not None and math.isfinite(value):
            run.summary[name] = float(value)
        else:
            undefined.append(name)
    if undefined:
        run.summary["rankeval/undefined"] = undefined
    if logged.per_user is not None:
        frame = logged.per_user.to_pandas()
        run.log({"rankeval/per_user": wandb.Table(dataframe=frame)})
    return str(run.id)


def _shut_down(wandb) -> None:
    """W&B's service shut down (its streams closed, every run's file written out), unless a
    run of the user's still uses it (a run made with ``reinit="create_new"`` is not
    ``wandb.run``; W&B's setup object lists them)."""
    if wandb.run is not None:
        return
    active = getattr(wandb.setup(), "most_recent_active_run", None)
    if callable(active) and active() is not None:
        return
    wandb.teardown()
