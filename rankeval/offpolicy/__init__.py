"""Off-policy evaluation (``rankeval ope``; SPEC section 10): what a new ranking policy would
have earned on the slates a logging policy showed, from the log of what users did.

``check`` checks the options and ``estimate`` estimates from inputs ``api/ope.py`` has read
(``ope``, the library's verb); ``inputs`` reads the log, the policies' probabilities and a
reward model from opened tables and codes their ids together;
``policy`` turns each policy (a ranked run, sampled rankings, probabilities) into its
probabilities of the logged slots; ``estimators`` holds the estimators over those arrays;
``result`` the intervals, the weights' diagnostics and what a report shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.gates import Gate, Verdict
from rankeval.errors import InputError, OptionError, plural, report
from rankeval.io.encode import factorize_list
from rankeval.offpolicy.estimators import (
    ESTIMATORS,
    SLATE,
    TOP1,
    Estimator,
    parts,
    propensity,
    weights,
)
from rankeval.offpolicy.inputs import Log, Table, code_log, code_rankings
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


def check(clip: float | None, level: float, fail_under: Sequence[str] | str
          ) -> list[tuple[str, float, str]]:
    """The options checked before any input is read; the gates parsed."""
    if clip is not None and not clip > 0:
        raise OptionError(f"--clip must be above 0, got {clip}")
    if not 0 < level < 1:
        raise OptionError(f"the interval's level must lie in (0, 1), got {level}")
    return _gates(fail_under)


def estimate(table: Table, policies: list, model: Table | None, names: list[str], *,
             estimators: Sequence[str] | str | None, clip: float | None, level: float,
             rounds: int, seed: int, ties: str, gates: list[tuple[str, float, str]]
             ) -> OffPolicy:
    """What each policy (a read ``Table`` of probabilities, or loaded ``Predictions``) would
    have earned on the log's slates (``table``), with a reward ``model`` or without, as
    ``api.ope`` reads them: every estimator's value, intervals, diagnostics and the gates'
    verdicts."""
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
        result = replace(result, verdicts=_verdicts(gates, result))
    return result


def _code(table, policies, model, ties: str) -> dict[str, Any]:
    """Every input's ids over shared dictionaries, the log sorted, each policy's target."""
    sides = [table, *policies, *([model] if model is not None else [])]

    def ids(p, role: str):
        return p.values[role] if isinstance(p, Table) else getattr(p, role)

    # a policy's probabilities and a reward model may be keyed by slate alone (ONE_OF)
    with_users = [i for i, p in enumerate(sides) if not isinstance(p, Table) or "user" in p.values]
    codes, user_ids = factorize_list([ids(sides[i], "user") for i in with_users])
    users: dict[int, np.ndarray] = dict(zip(with_users, codes, strict=True))
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

    def keyed(j: int) -> tuple[Table, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """Input ``j``'s rows of the log's slates (all, when keyed by user): the table,
        its user codes (None: keyed by slate alone), item codes and slates."""
        slate = lg.slates(slate_codes[j]) if j in slate_codes else None
        keep = slice(None) if slate is None else slate >= 0
        user = users[j][keep] if j in users else None
        slate = None if slate is None else slate[keep]
        if user is not None and slate is not None:
            _check_users(sides[j], lg, user, slate, keep)
        return _subset(sides[j], keep), user, items[j][keep], slate

    rm: RewardModel | None = None
    if model is not None:
        m, user, item, slate = keyed(len(sides) - 1)
        rm = reward_model(m, user, item, slate, lg, n_items)
    targets: list[Target] = []
    for i, p in enumerate(policies, start=1):
        if isinstance(p, Table):
            targets.append(from_probabilities(lg, *keyed(i), n_items, rm))
        else:
            rk = code_rankings(p, users[i], items[i], lg.longest, ties)
            targets.append(from_rankings(lg, rk, len(user_ids), rm))
    return {"log": lg, "targets": targets, "users": user_ids, "items": item_ids}


def _check_users(table: Table, lg: Log, user: np.ndarray, slate: np.ndarray, keep) -> None:
    """A table keyed by user and slate names each slate's user as the log does."""
    wrong = np.flatnonzero(user != lg.slate_user[slate])
    if len(wrong):
        rows = np.arange(len(table.values["item"]))[keep][wrong]
        report(InputError(table.label, "slates given to another user than the log shows them "
                          "to", column=table.columns["user"], count=len(rows),
                          examples=[(int(r) + 1, "") for r in rows[:5]]))


def _subset(table, keep):
    """A read table's rows ``keep`` (a slice or a mask)."""
    if isinstance(keep, slice):
        return table
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
                              f"{', '.join(ESTIMATORS)}")
        if e.model and not has_model:
            raise OptionError(f"{e.name} needs a reward model (--reward-model FILE)")
        out.append(e)
    return out


def _run_result(name: str, target: Target, got: dict, bands: dict, lg: Log,
                clip: float | None, wanted: list[Estimator]) -> RunResult:
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
        warnings.append(f"{name}: the policy has nothing for {uncovered:,} of "
                        f"{plural(lg.n, 'slate')} "
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
