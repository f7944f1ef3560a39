"""Weights & Biases: an evaluation's metrics, settings and per-user values in a W&B run
(``rankeval score --wandb``, ``Evaluation.log_wandb()``).

The metrics go to the run's summary under their own names (``ndcg@10``); an undefined value
is not logged as a number (the summary's ``rankeval/undefined`` lists it). The settings go
to the run's config, the per-user values to a table ``rankeval/per_user`` (when they are on
this machine). The run is the active one, else a new one (``WANDB_PROJECT``, default
``rankeval``; job type ``evaluation``) that is finished once logged. ``WANDB_MODE`` is
honoured; without it and without ``WANDB_API_KEY`` the run is offline: written to the run
directory (``WANDB_DIR``), never sent anywhere.
"""

from __future__ import annotations

import math
import os
from typing import Any

from rankeval.errors import OptionError


def _wandb():
    try:
        import wandb
    except ImportError:
        raise OptionError("W&B logging needs wandb: pip install 'rankeval[wandb]' (from this "
                          "checkout: pip install -e '.[wandb]')") from None
    return wandb


def log_evaluation(ev, run: Any = None) -> str:
    """Log ``ev`` to ``run`` (a W&B run), the active run, or a new one; returns its id."""
    wandb = _wandb()
    own = run is None and wandb.run is None
    if own:
        mode = os.environ.get("WANDB_MODE") or (
            None if os.environ.get("WANDB_API_KEY") else "offline")
        run = wandb.init(project=os.environ.get("WANDB_PROJECT", "rankeval"),
                         job_type="evaluation", mode=mode)
    run = run if run is not None else wandb.run
    try:
        from rankeval.integrations.mlflow import params

        run.config.update({f"rankeval/{k}": v for k, v in params(ev).items()},
                          allow_val_change=True)
        undefined = []
        for name, value in ev.metrics.items():
            if value is not None and math.isfinite(value):
                run.summary[name] = float(value)
            else:
                undefined.append(name)
        if undefined:
            run.summary["rankeval/undefined"] = undefined
        if ev.store.here:
            frame = ev.per_user_table().to_pandas()
            run.log({"rankeval/per_user": wandb.Table(dataframe=frame)})
        return str(run.id)
    finally:
        if own:
            run.finish()
