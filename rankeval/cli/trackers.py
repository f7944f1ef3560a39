"""--mlflow and --wandb on the commands that log (score, interleave score): each tracker
loaded before any input is read, and the result logged after the verdicts are said."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from rankeval.cli.app import error


def open_trackers(kw) -> dict[str, Callable[[Any], str]]:
    """--mlflow, --wandb: each tracker's logger, imported before any input is read (a
    missing one is a one-line error, not a lost evaluation)."""
    out: dict[str, Callable[[Any], str]] = {}
    if kw["mlflow"]:
        from rankeval.integrations import mlflow  # --help's import cost: logging, tempfile

        mlflow.require()
        out["MLflow"] = lambda ev: mlflow.log_evaluation(ev)
    if kw["wandb"]:
        from rankeval.integrations import wandb  # --help's import cost, as above

        wandb.require()
        out["W&B"] = lambda ev: wandb.log_evaluation(ev)
    return out


def log_to(trackers: dict[str, Callable[[Any], str]], result, quiet: bool) -> None:
    """Each tracker in turn, each failure one line; the last one raised (exit 2)."""
    if not trackers:
        return
    from rankeval.integrations.support import IntegrationError  # --help's import cost

    failed: IntegrationError | None = None
    for name, log in trackers.items():
        try:
            run_id = log(result)
        except IntegrationError as exc:
            if failed is not None:
                error(str(failed))
            failed = exc
            continue
        if not quiet:
            click.echo(f"rankeval: logged to {name} run {run_id}", err=True)
    if failed is not None:
        raise failed
