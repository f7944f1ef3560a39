"""Off-policy evaluation (``rankeval ope``; SPEC section 10): what a new ranking policy would
have earned on the slates a logging policy showed, from the log of what users did.

``inputs`` reads the log, the policies and a reward model and codes their ids together;
``policy`` turns each policy (a ranked run, sampled rankings, probabilities) into its
probabilities of the logged slots; ``estimators`` holds the estimators over those arrays;
``result`` the intervals, the weights' diagnostics and what a report shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.errors import InputError, OptionError
from rankeval.io.columns import COLUMNS, resolve_column
from rankeval.io.encode import factorize_list
from rankeval.io.load import load_predictions, open_input
from rankeval.io.run_names import run_names
from rankeval.offpolicy.estimators import ESTIMATORS, SLATE, TOP1, Estimator, parts
from rankeval.offpolicy.inputs import PROBABILITIES, Log, code_log, code_rankings, read
from rankeval.offpolicy.policy import (
    RewardModel,
    Target,
    from_probabilities,
    from_rankings,
    reward_model,
)
from rankeval.offpolicy.result import (
    Difference,
    Estimate,
    OffPolicy,
    RunResult,
    Weights,
    intervals,
)


def ope(log: Any, runs: Any, *, names: Sequence[str] | None = None,
        estimators: Sequence[str] | str | None = None, clip: float | None = None,
        reward_model: Any = None, level: float = 0.95, rounds: int = 2000, seed: int = 0,
        ties: str = "trec", fail_under: Sequence[str] = (), log_format: str | None = None,
        run_format: str | None = None, reward_model_format: str | None = None,
        reading: dict[str, Any] | None = None, **columns: str | None) -> OffPolicy:
    """Estimate what each run (a new policy) would have earned on the log's slates.

    ``log``: one row per shown slot (user, position, item, reward, and the logging policy's
    propensity of the item at the position, of the top k, or of the whole slate). ``runs``:
    one or several new policies, each a ranked run (user, item, rank or score), sampled
    rankings (a ``sample`` column) or probabilities of the logged slots (user, position,
    item, ``probability`` ...). Any input: a path, ``-`` or a pandas, polars or Arrow table.
    ``estimators``: names (default: every one the inputs allow); ``clip``: the largest
    weight; ``reward_model``: predicted rewards (user, position, item, predicted_reward) for
    the direct and doubly robust estimators; ``fail_under``: gates ``'snips=0.03'``;
    ``columns``: ``user_col=`` ... for columns the aliases do not find.
    """
    runs = list(runs) if isinstance(runs, list | tuple) else [runs]
    names = run_names(runs, names, _name)  # one each, never twice, as compare's
    if clip is not None and not clip > 0:
        raise OptionError(f"--clip must be above 0, got {clip}")
    if not 0 < level < 1:
        raise OptionError(f"the interval's level must lie in (0, 1), got {level}")
    gates = _gates(fail_under)
    cols = {f"{c}_col": columns.pop(f"{c}_col", None) for c in COLUMNS}
    if columns:
        raise OptionError(f"unknown option {next(iter(columns))!r}")
    table = read(log, "log", log_format, cols, reading)
    policies = [_open_policy(r, run_format, cols, reading) for r in runs]
    model = (read(reward_model, "reward_model", reward_model_format, cols, reading)
             if reward_model is not None else None)
    coded = _code(table, policies, model, ties)
    lg: Log = coded["log"]
    wanted = _estimators(estimators, lg, coded, model is not None)
    results, all_parts = [], []
    for name, target in zip(names, coded["targets"], strict=True):
        got = {e.name: p for e in wanted if (p := parts(e, lg, target, clip)) is not None}
        all_parts.append(got)
        results.append((name, target, got))
    own, diff = intervals(all_parts, level, rounds, seed)
    out = [_run_result(name, target, got, own[i], lg, clip, wanted)
           for i, (name, target, got) in enumerate(results)]
    differences = [Difference(out[i + 1].name, out[0].name, k, out[i + 1].estimates[k].value
                              - out[0].estimates[k].value, lo, hi, method)
                   for i, d in enumerate(diff) for k, (lo, hi, method) in d.items()]
    summary = {"path": lg.source.path, "rows": len(lg.slate), "slates": lg.n,
               "users": len(np.unique(lg.slate_user)), "longest": lg.longest,
               "propensities": sorted(lg.propensity), "top1": lg.longest == 1,
               "mean_reward": float(lg.reward.sum() / lg.n) if lg.n else None}
    result = OffPolicy(summary, out, differences, level, clip, contexts=lg.ids,
                       context="slate_id" if lg.has_slates else "user_id")
    if gates:
        from dataclasses import replace

        result = replace(result, verdicts=_verdicts(gates, result))
    return result


def _name(run: Any, i: int) -> str:
    """A run's default name: its path as given (``run1``... for an in-memory table)."""
    return str(run) if isinstance(run, str) else f"run{i}"


def _open_policy(run: Any, fmt: str | None, cols: dict[str, str | None],
                 reading: dict[str, Any] | None):
    """A run as the policy form its columns say: probabilities when it has a probability
    column and a position column, else a ranked run (or sampled rankings)."""
    table = open_input(run, "predictions", fmt, reading)
    names = list(table.columns)
    has_probability = any(resolve_column(names, c, cols.get(f"{c}_col"), table.label, False)
                          for c in PROBABILITIES)
    if has_probability and resolve_column(names, "rank", cols.get("rank_col"), table.label,
                                          False):
        return read(table, "policy", None, cols, reading)
    return load_predictions(table, cols.get("user_col"), cols.get("item_col"),
                            cols.get("rank_col"), cols.get("score_col"), cols.get("sample_col"))


def _code(table, policies, model, ties: str) -> dict[str, Any]:
    """Every input's ids over shared dictionaries, the log sorted, each policy's target."""
    from rankeval.offpolicy.inputs import Table

    sides = [table, *policies, *([model] if model is not None else [])]

    def ids(p, role: str):
        return p.values[role] if isinstance(p, Table) else getattr(p, role)

    users, user_ids = factorize_list([ids(p, "user") for p in sides])
    items, item_ids = factorize_list([ids(p, "item") for p in sides])
    with_slates = [i for i, p in enumerate(sides) if isinstance(p, Table)
                   and "slate" in p.values]
    if with_slates and with_slates[0] != 0:
        other = sides[with_slates[0]]
        raise OptionError(f"{other.label} has a slate column ({other.columns['slate']!r}) and "
                          f"the log {table.label} none: give the log its slate ids")
    slate_codes: dict[int, np.ndarray] = {}
    slate_ids = user_ids
    if 0 in with_slates:
        codes, slate_ids = factorize_list([sides[i].values["slate"] for i in with_slates])
        slate_codes = dict(zip(with_slates, codes, strict=True))
    lg = code_log(table, users[0], items[0], slate_codes.get(0), slate_ids)
    n_items = len(item_ids)
    rm: RewardModel | None = None
    if model is not None:
        j = len(sides) - 1
        slate = lg.slates(slate_codes[j]) if j in slate_codes else None
        keep = slice(None) if slate is None else slate >= 0
        rm = reward_model(_subset(model, keep), users[j][keep], items[j][keep],
                          None if slate is None else slate[keep], lg, n_items)
    targets: list[Target] = []
    for i, p in enumerate(policies, start=1):
        if isinstance(p, Table):
            slate = lg.slates(slate_codes[i]) if i in slate_codes else None
            keep = slice(None) if slate is None else slate >= 0
            targets.append(from_probabilities(lg, _subset(p, keep), users[i][keep],
                                              items[i][keep],
                                              None if slate is None else slate[keep],
                                              n_items, rm))
        else:
            rk = code_rankings(p, users[i], items[i], lg.longest, ties)
            targets.append(from_rankings(lg, rk, len(user_ids), rm))
    return {"log": lg, "targets": targets, "users": user_ids, "items": item_ids}


def _subset(table, keep):
    """A read table's rows ``keep`` (a slice or a mask)."""
    if isinstance(keep, slice):
        return table
    from dataclasses import replace

    rows = pa.array(np.flatnonzero(keep))
    return replace(table, values={k: v.take(rows) if isinstance(v, pa.ChunkedArray | pa.Array)
                                  else v[keep] for k, v in table.values.items()})


def _estimators(asked, lg: Log, coded, has_model: bool) -> list[Estimator]:
    """The estimators asked for, or every one the inputs allow (top-1 names on a log of
    single slots)."""
    if not lg.propensity and not has_model:
        raise InputError(lg.source.label, "no propensity column (propensity, "
                         "cascade_propensity or slate_propensity): every estimator but the "
                         "direct method weighs the rewards by the logging policy's chances; "
                         "give one, or a reward model (--reward-model) for the direct method")
    family = TOP1 if lg.longest == 1 else SLATE
    if asked is None:
        return [e for e in family if not e.model or has_model]
    names = [a.strip().lower() for a in (asked.split(",") if isinstance(asked, str) else asked)]
    out = []
    for name in names:
        e = ESTIMATORS.get(name.replace("-", "_"))
        if e is None:
            raise OptionError(f"unknown estimator {name!r}; known: "
                              f"{', '.join(e.name for e in (*SLATE, TOP1[0], TOP1[1], TOP1[3]))}")
        if e.model and not has_model:
            raise OptionError(f"{e.name} needs a reward model (--reward-model FILE)")
        out.append(e)
    return out


def _run_result(name: str, target: Target, got: dict, bands: dict, lg: Log,
                clip: float | None, wanted: list[Estimator]) -> RunResult:
    from rankeval.offpolicy.estimators import propensity, weights

    estimates = {k: Estimate(k, p.value(), *bands[k]) for k, p in got.items()}
    kinds = {e.weights for e in wanted if e.name in got and e.weights}
    diag, warnings = {}, []
    for kind in sorted(kinds):
        w = weights(lg, target, kind, None)
        assert w is not None
        unit = "slate" if kind == "slate" else "slot"
        if kind == "slate":
            w = w[lg.start]
        diag[kind] = Weights.of(kind, unit, w, clip)
        warnings += diag[kind].warnings(name)
    missing = [e for e in wanted if e.name not in got]
    for e in missing:
        need = "a reward model" if e.model else (
            f"the logging policy's {e.weights} propensity" if propensity(lg, e.weights) is None
            else f"the policy's {e.weights} probability")
        warnings.append(f"{name}: {e.name} not estimated: it needs {need}")
    uncovered = int((~target.covered).sum())
    if uncovered:
        warnings.append(f"{name}: the policy has nothing for {uncovered:,} of {lg.n:,} slates "
                        "(their users are not in it): it earns nothing there")
    effect = {}
    if clip is not None:
        for e in wanted:
            if e.name in got and e.weights and not e.model:
                raw = parts(e, lg, target, None)
                assert raw is not None
                effect[e.name] = raw.value() - got[e.name].value()
    return RunResult(name, estimates, diag, warnings, int(target.covered.sum()), got, effect)


def _gates(texts: Sequence[str]) -> list[tuple[str, float, str]]:
    """``'snips=0.03'`` -> (estimator, threshold, text), checked before reading anything."""
    out = []
    for text in ([texts] if isinstance(texts, str) else texts):
        name, eq, value = str(text).partition("=")
        e = ESTIMATORS.get(name.strip().lower().replace("-", "_"))
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
        if not eq or e is None or not math.isfinite(threshold):
            raise OptionError(f"--fail-under takes ESTIMATOR=VALUE (e.g. snips=0.03), got "
                              f"{text!r}")
        out.append((e.name, threshold, str(text)))
    return out


def _verdicts(gates, result: OffPolicy) -> list:
    from rankeval.analysis.gates import Gate, Verdict

    out = []
    for name, threshold, text in gates:
        for run in result.runs:
            if name not in run.estimates:
                raise OptionError(f"--fail-under {text}: {name} is not estimated for "
                                  f"{run.name} ({'; '.join(run.warnings) or 'not asked'})")
            value = run.estimates[name].value
            label = name if len(result.runs) == 1 else f"{run.name}:{name}"
            out.append(Verdict(Gate("fail_under", label, threshold, text=text), label, value,
                               threshold, value >= threshold))
    return out
