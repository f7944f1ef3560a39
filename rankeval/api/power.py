"""``power(run_a, run_b, truth, ...)`` -> a ``PowerResult`` (``rankeval power``): how many
users a comparison of two runs needs, and what it can detect. The runs are scored here (or
their per-user files read) and paired by user; ``analysis/power.py`` does the statistics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from rankeval.analysis.paired import align
from rankeval.analysis.power import Effect, PowerResult, analyse, check
from rankeval.api.per_user import from_files, name_of
from rankeval.api.request import request
from rankeval.engines.pipeline import run
from rankeval.errors import OptionError


def power(
    run_a: Any = None,
    run_b: Any = None,
    truth: Any = None,
    metrics: Any = None,
    k: Any = None,
    *,
    effect: str | float | Effect | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    method: str = "t",
    rounds: int = 2000,
    seed: int = 0,
    systems: int | None = None,
    per_user_a: Any = None,
    per_user_b: Any = None,
    names: tuple[str, str] | None = None,
    compat: str | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
    reading: Mapping[str, Any] | None = None,
    config: str | None = None,
    **options: Any,
) -> PowerResult:
    """How many users a comparison of run B against run A needs, and what it can detect.

    Either ``run_a``, ``run_b`` and ``truth`` (anything ``evaluate`` takes, with its
    ``metrics``, ``k`` and settings as keywords), or ``per_user_a`` and ``per_user_b``:
    per-user values as ``rankeval score --per-user`` writes them (a path or table with
    ``user_id`` and one column per metric; the users of both are paired by id).
    ``effect``: the difference that matters, absolute (``0.01``) or relative to A's mean
    (``"1%"``); ``alpha``, ``power``: the test's level and the power wanted; ``alternative``:
    ``two-sided``, ``larger`` (B above A) or ``smaller``; ``method``: ``t`` (exact) or
    ``bootstrap`` (``rounds`` resamples, ``seed``); ``systems``: Sakai's design for that many
    systems (one-way ANOVA); ``config``: the configuration file the options came from, named
    in every report.

    >>> r = power("a.csv", "b.csv", "truth.csv", "ndcg@10", effect="1%")
    >>> r.rows[0].users_needed, r.rows[0].mde
    """
    wanted = effect if isinstance(effect, Effect) or effect is None else Effect.parse(effect)
    check(alpha, power, alternative, method, rounds, systems)
    if per_user_a is not None or per_user_b is not None:
        if per_user_a is None or per_user_b is None or run_a is not None or truth is not None:
            raise OptionError("give {opt:per_user_a} and {opt:per_user_b} (per-user files), "
                              "or two runs and the truth, not both")
        paired, labels = from_files(per_user_a, per_user_b, metrics)
    else:
        paired = from_runs(run_a, run_b, truth, metrics, k, compat, preds_format,
                           truth_format, reading or {}, options | {"config": config})
        labels = (name_of(run_a, "A"), name_of(run_b, "B"))
    rows = [analyse(m, a, b, wanted, alpha, power, alternative, method, rounds, seed, systems)
            for m, (a, b) in paired.items()]
    notices = [f"{r.metric}: the differences have no spread (every user moved by "
               f"{r.mean_difference:+g}), so no power can be computed" for r in rows
               if r.sd == 0]
    notices += [f"{r.metric}: fewer than 2 users have a value in both runs" for r in rows
                if r.users < 2]
    return PowerResult(rows, alpha, power, alternative, method, wanted, systems, rounds, seed,
                       names or labels, notices, config)


def from_runs(run_a, run_b, truth, metrics, k, compat, preds_format, truth_format,
               reading, options) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """metric -> (A's values, B's values) over the users both runs evaluate, from the runs
    scored on this machine with every option ``evaluate`` takes."""
    if run_a is None or run_b is None or truth is None:
        raise OptionError("power needs two runs and the truth (RUN_A RUN_B TRUTH), or "
                          "{opt:per_user_a} and {opt:per_user_b}")
    made = request(run_a, truth, metrics, k, {"compat": compat, "preds_format": preds_format,
                                             "truth_format": truth_format, **options},
                   engine_options={}, reading=reading)
    a, b = (run(made.engine, replace(made.job, inputs=replace(made.job.inputs, predictions=r)))
            for r in (run_a, run_b))
    specs = [s for s in a.specs if str(s) not in a.corpus]
    if not specs:
        raise OptionError("power needs a per-user metric (corpus metrics have one value per "
                          "run)")
    return {str(s): align(a.user_id_array, a.values(s), b.user_id_array, b.values(s))
            for s in specs}
