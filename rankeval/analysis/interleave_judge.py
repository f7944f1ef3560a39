"""An interleaving log judged (SPEC §13): which clicks count, each method's credit, every pair
of rankers' preference with its corrected p-value, the impressions a Delta needs, and the
gates on Delta. Arrays in (a checked log's columns), dataclasses out.

Which clicks count: ``all`` of them, or only each impression's ``last`` (the latest in time,
else the lowest on the list: the click users ended on); with ``min_dwell``, only clicks
whose dwell time reached it (a click without a dwell time then does not count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankeval.analysis.choices import CLICK_RULES, INTERLEAVE_GROUPS, INTERLEAVE_METHODS
from rankeval.analysis.interleaving import (
    Plan,
    Preference,
    balanced_credits,
    credits,
    impressions_needed,
    outcomes,
    preference,
    probabilistic_outcomes,
)
from rankeval.analysis.significance import correct
from rankeval.errors import OptionError

METHODS = INTERLEAVE_METHODS
GROUPS = INTERLEAVE_GROUPS


@dataclass(frozen=True)
class Pair:
    """One pair of rankers judged: the preference (``Preference``: counts, Delta of ``a``
    over ``b``, interval, sign test), its p-value corrected over every pair, and the plan
    (None unless asked for)."""

    preference: Preference[int]
    p_adjusted: float
    plan: Plan | None


@dataclass(frozen=True)
class Gate:
    """A gate on a candidate's preference over the baseline (``Delta`` of the candidate,
    positive when users prefer it): ``fail_if_worse`` fails when it is significantly below 0
    (the corrected sign test at ``alpha``; probabilistic interleaving, which has none: the
    two-sided (1 - alpha) interval lies below 0); ``non_inferior`` passes when the one-sided
    (1 - alpha) lower bound lies above ``-margin``."""

    kind: str
    candidate: str
    baseline: str
    delta: float
    bound: float  # non_inferior: the lower bound; fail_if_worse: the p-value (or NaN)
    margin: float | None
    alpha: float
    passed: bool

    def message(self) -> str:
        word = "passed" if self.passed else "FAILED"
        if self.kind == "non_inferior":
            return (f"{word} {self.candidate} is {'' if self.passed else 'not '}shown "
                    f"non-inferior to {self.baseline} by margin {self.margin:g}: Delta "
                    f"{_num(self.delta)}, one-sided {1 - self.alpha:.0%} lower bound "
                    f"{_num(self.bound)} {'>' if self.passed else '<='} {-(self.margin or 0):g}")
        return (f"{word} {self.candidate} is {'not ' if self.passed else ''}significantly "
                f"worse than {self.baseline}: Delta {_num(self.delta)}"
                + (f", p adjusted {self.bound:.3g}" if math.isfinite(self.bound) else ""))

    def to_dict(self) -> dict:
        return {"kind": self.kind, "candidate": self.candidate, "baseline": self.baseline,
                "delta": _none(self.delta), "bound": _none(self.bound), "margin": self.margin,
                "alpha": self.alpha, "passed": self.passed}


def _num(x: float) -> str:
    return f"{x:+.4f}" if math.isfinite(x) else "undefined"


def _none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def check(method: str, clicks: str, group_by: str, min_dwell: float | None,
          margin: float | None, plan_delta: float | None, alpha: float, power: float) -> None:
    """The options, before any file is read."""
    for value, choices, name in ((method, METHODS, "method"), (clicks, CLICK_RULES, "clicks"),
                                 (group_by, GROUPS, "by")):
        if value not in choices:
            raise OptionError(f"{{option}} must be one of {', '.join(choices)}, got {value!r}",
                              name)
    if min_dwell is not None and not min_dwell >= 0:
        raise OptionError(f"{{option}} must be 0 or more, got {min_dwell}", "min_dwell")
    if margin is not None and not 0 < margin < 0.5:
        raise OptionError(f"{{option}} is a margin on Delta, which lies in [-0.5, 0.5]: give "
                          f"one in (0, 0.5), got {margin}", "non_inferior")
    if plan_delta is not None and not 0 < abs(plan_delta) < 0.5:
        raise OptionError(f"{{option}} must lie in (-0.5, 0.5) and not be 0, got "
                          f"{plan_delta}", "plan")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise OptionError(f"{{opt:alpha}} and {{opt:power}} must lie in (0, 1), got {alpha} "
                          f"and {power}")


def counted_clicks(impression: np.ndarray, position: np.ndarray, clicked: np.ndarray,
                   rule: str, dwell: np.ndarray | None = None, order: np.ndarray | None = None,
                   min_dwell: float | None = None) -> np.ndarray:
    """The clicks that count, per slot: ``clicked`` with a dwell of at least ``min_dwell``
    (NaN dwell: not counted), and under ``last`` only each impression's last such click (the
    latest by ``order``, -1 meaning no time; then the lowest position)."""
    counted = np.asarray(clicked, dtype=bool).copy()
    if min_dwell is not None:
        if dwell is None:
            raise OptionError("{option} needs a dwell column in the log (dwell, dwell_time)",
                              "min_dwell")
        with np.errstate(invalid="ignore"):
            counted &= dwell >= min_dwell
    if rule == "last" and counted.any():
        rows = np.flatnonzero(counted)
        time = order[rows] if order is not None else np.full(len(rows), -1)
        last = np.lexsort((position[rows], time, impression[rows]))
        ends = np.append(impression[rows][last][1:] != impression[rows][last][:-1], True)
        counted[:] = False
        counted[rows[last[ends]]] = True
    return counted


def _dense(impression: np.ndarray, values: np.ndarray, impressions: int, fill) -> np.ndarray:
    """Slots (sorted by impression, then position) as impressions x slots (x ...)."""
    starts = np.searchsorted(impression, np.arange(impressions))
    slot = np.arange(len(impression)) - starts[impression]
    width = int(slot.max()) + 1 if len(slot) else 1
    out = np.full((impressions, width, *values.shape[1:]), fill, dtype=values.dtype)
    out[impression, slot] = values
    return out


def judge(method: str, impression: np.ndarray, group: np.ndarray, position: np.ndarray,
          counted: np.ndarray, impressions: int, rankers: int, team: np.ndarray | None = None,
          chance: np.ndarray | None = None, rank_of: np.ndarray | None = None,
          level: float = 0.95, rounds: int = 10_000, seed: int = 0,
          correction: str = "holm", plan_delta: float | None = None, alpha: float = 0.05,
          power: float = 0.8) -> tuple[list[Pair], dict[tuple[int, int], np.ndarray]]:
    """Every pair (a < b) of the rankers judged on the counted clicks, with the p-values
    corrected over the pairs (``correction``) and, with ``plan_delta``, the impressions each
    pair needs; and each pair's per-impression outcomes (for gates and plans)."""
    group_of = np.zeros(impressions, dtype=np.int64)
    group_of[impression] = group
    per_pair: dict[tuple[int, int], np.ndarray] = {}
    pairs = [(a, b) for a in range(rankers) for b in range(a + 1, rankers)]
    if method == "probabilistic":
        assert chance is not None
        dense_chance = _dense(impression, chance, impressions, 0.0)
        dense_click = _dense(impression, counted, impressions, False)
        for a, b in pairs:
            per_pair[a, b] = probabilistic_outcomes(dense_chance, dense_click, a, b)
    else:
        if method == "balanced":
            assert rank_of is not None
            credit = balanced_credits(impression, position, rank_of[:, 0], rank_of[:, 1],
                                      counted, impressions)
        else:
            assert team is not None
            credit = credits(impression, team, counted, impressions, rankers)
        for a, b in pairs:
            per_pair[a, b] = outcomes(credit, a, b)
    prefs = [preference(per_pair[a, b], group_of, a, b, level, rounds, seed)
             for a, b in pairs]
    adjusted = correct([p.p_value for p in prefs], correction)
    out = []
    for (a, b), p, q in zip(pairs, prefs, adjusted, strict=True):
        plan = (impressions_needed(per_pair[a, b], group_of, plan_delta, alpha, power)
                if plan_delta is not None else None)
        out.append(Pair(p, float(q), plan))
    return out, per_pair


def gates(pairs: list[Pair], per_pair: dict[tuple[int, int], np.ndarray],
          group_of: np.ndarray, teams: tuple[str, ...], baseline: int, fail_if_worse: bool,
          margin: float | None, alpha: float, rounds: int, seed: int) -> list[Gate]:
    """Each candidate (every team but ``baseline``) gated against the baseline."""
    out: list[Gate] = []
    for pair in pairs:
        p = pair.preference
        if baseline not in (p.a, p.b):
            continue
        candidate = p.b if p.a == baseline else p.a
        sign = -1.0 if p.a == baseline else 1.0  # Delta of the candidate over the baseline
        delta = sign * p.delta
        if margin is not None:  # the one-sided (1 - alpha) bound: a (1 - 2 alpha) interval
            wide = preference(per_pair[p.a, p.b], group_of, p.a, p.b, 1 - 2 * alpha, rounds,
                              seed)
            bound = -wide.high if sign < 0 else wide.low
            out.append(Gate("non_inferior", teams[candidate], teams[baseline], delta, bound,
                            margin, alpha, bool(math.isfinite(bound) and bound > -margin)))
        if fail_if_worse:
            if math.isfinite(pair.p_adjusted):
                worse = delta < 0 and pair.p_adjusted < alpha
                bound = pair.p_adjusted
            else:  # no sign test (expected counts): the (1 - alpha) interval judges
                wide = preference(per_pair[p.a, p.b], group_of, p.a, p.b, 1 - alpha, rounds,
                                  seed)
                high = -wide.low if sign < 0 else wide.high
                worse = math.isfinite(high) and high < 0
                bound = math.nan
            out.append(Gate("fail_if_worse", teams[candidate], teams[baseline], delta, bound,
                            None, alpha, not worse))
    return out


def trajectory(outcome: np.ndarray, group_of: np.ndarray, arrival: np.ndarray,
               level: float, rounds: int, seed: int, points: int = 8
               ) -> list[tuple[int, float, float, float]]:
    """Delta and its interval over the first n impressions to arrive, at ``points``
    checkpoints up to all of them: how the verdict firmed up as the log grew."""
    order = np.argsort(arrival, kind="stable")
    total = len(order)
    marks = sorted({max(1, round(total * (i + 1) / points)) for i in range(points)})
    out = []
    for n in marks:
        first = order[:n]
        p = preference(outcome[first], group_of[first], 0, 1, level, rounds, seed)
        out.append((int(n), p.delta, p.low, p.high))
    return out
