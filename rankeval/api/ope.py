"""``ope(log, runs, ...)`` -> an ``OffPolicy`` (``rankeval ope``): what each new ranking policy
would have earned on the slates a logging policy showed. The log, the runs and the reward
model are opened here; ``offpolicy`` checks, codes and estimates."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from rankeval.errors import OptionError
from rankeval.io.columns import COLUMNS, resolve_column
from rankeval.io.load import load_predictions, open_input
from rankeval.io.run_names import run_names
from rankeval.offpolicy import check, estimate
from rankeval.offpolicy.inputs import PROBABILITIES, read
from rankeval.offpolicy.result import OffPolicy


def ope(log: Any, runs: Any, *, names: Sequence[str] | None = None,
        estimators: Sequence[str] | str | None = None, clip: float | None = None,
        reward_model: Any = None, level: float = 0.95, rounds: int = 10_000, seed: int = 0,
        ties: str = "trec", fail_under: Sequence[str] = (), log_format: str | None = None,
        run_format: str | None = None, reward_model_format: str | None = None,
        reading: Mapping[str, Any] | None = None, config: str | None = None,
        **columns: str | None) -> OffPolicy:
    """Estimate what each run (a new policy) would have earned on the log's slates.

    ``log``: one row per shown slot (user, position, item, reward, and the logging policy's
    propensity of the item at the position, of the top k, or of the whole slate). ``runs``:
    one or several new policies, each a ranked run (user, item, rank or score), sampled
    rankings (a ``sample`` column) or probabilities of the logged slots (``slate_id``, user
    or both, position, item, ``probability`` ...). Any input: a path, ``-`` or a pandas,
    polars or Arrow table. ``estimators``: names (default: every one the inputs allow);
    ``clip``: the largest weight; ``reward_model``: predicted rewards (``slate_id``, user or
    both, position, item, predicted_reward) for the direct and doubly robust estimators;
    ``fail_under``: gates ``'snips=0.03'``; ``columns``: ``user_col=`` ... for columns the
    aliases do not find; ``config``: the configuration file the options came from, named in
    every report.
    """
    runs = list(runs) if isinstance(runs, list | tuple) else [runs]
    names = run_names(runs, names, _name)  # one each, never twice, as compare's
    gates = check(clip, level, fail_under)
    cols = {f"{c}_col": columns.pop(f"{c}_col", None) for c in COLUMNS}
    if columns:
        raise OptionError(f"unknown option {next(iter(columns))!r}")
    table = read(open_input(log, "log", log_format, reading), "log", cols)
    policies = [_open_policy(r, run_format, cols, reading) for r in runs]
    model = (read(open_input(reward_model, "reward_model", reward_model_format, reading),
                  "reward_model", cols) if reward_model is not None else None)
    result = estimate(table, policies, model, names, estimators=estimators, clip=clip,
                      level=level, rounds=rounds, seed=seed, ties=ties, gates=gates)
    return dataclasses.replace(result, config=config)


def _name(run: Any, i: int) -> str:
    """A run's default name: its path as given (``run1``... for an in-memory table)."""
    return str(run) if isinstance(run, str) else f"run{i}"


def _open_policy(run: Any, fmt: str | None, cols: dict[str, str | None],
                 reading: Mapping[str, Any] | None):
    """A run as the policy form its columns say: probabilities when it has a probability
    column and a position column, else a ranked run (or sampled rankings)."""
    table = open_input(run, "predictions", fmt, reading)
    names = list(table.columns)
    has_probability = any(resolve_column(names, c, cols.get(f"{c}_col"), table.label, False)
                          for c in PROBABILITIES)
    if has_probability and resolve_column(names, "rank", cols.get("rank_col"), table.label,
                                          False):
        return read(table, "policy", cols)
    return load_predictions(table, cols)
