"""Runs tested against their baselines, from per-user values (arrays in, plain data out): one
``Cell`` per run, baseline and metric (the paired test over the users both score, corrected
over each metric's tests; a corpus metric's difference, untested), the minimum effect that
matters (``sized``) and the ``fail_if_worse`` gate's verdict (``WorseVerdict``)."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.analysis.significance import Comparison, compare, correct_within, family_of
from rankeval.errors import plural
from rankeval.names import from_name, is_corpus
from rankeval.notices import Notice
from rankeval.registry import GEOMETRIC, REGISTRY


@dataclass
class Cell:
    """One run against one baseline on one metric."""

    run: str
    metric: str
    stats: Comparison
    p_adjusted: float
    significant: bool | None  # None: the test is undefined here (never "not significant")
    # significant, but |delta| below --min-effect (what matters); None: no minimum given
    small: bool | None = None
    baseline: str = ""

    @property
    def tested(self) -> bool:
        """Whether the metric has per-user values to test (a corpus metric has one value per
        run: a difference, no test)."""
        return not is_corpus(self.metric)

    @property
    def defined(self) -> bool:
        """Whether the comparison has a value: some user has one in both runs (per-user
        metrics), or both runs have one (corpus metrics)."""
        return math.isfinite(self.stats.delta) and (bool(self.stats.n) or not self.tested)

    def to_dict(self) -> dict[str, Any]:
        s = self.stats
        return {
            "run": self.run,
            "baseline": self.baseline,
            "metric": self.metric,
            "mean": finite_or_none(s.mean_b),
            "baseline_mean": finite_or_none(s.mean_a),
            "delta": finite_or_none(s.delta),
            "tested": self.tested,
            "users": s.n if self.tested else None,
            "p_value": finite_or_none(s.p_value),
            "p_adjusted": finite_or_none(self.p_adjusted),
            "significant": self.significant,
            "below_min_effect": self.small,
            "effect_size": finite_or_none(s.effect_size),
            "ci": [finite_or_none(s.ci_low), finite_or_none(s.ci_high)],
            "wins": s.wins,
            "ties": s.ties,
            "losses": s.losses,
        }


@dataclass(frozen=True)
class WorseVerdict:
    """The ``fail_if_worse`` gate of one run against one baseline: passed when no metric is
    significantly worse (and, with ``min_effect``, by at least that much)."""

    run: str
    baseline: str
    worse: tuple[Cell, ...]
    tested: int  # the metrics with a test of this run against this baseline

    @property
    def passed(self) -> bool:
        return not self.worse

    def message(self) -> str:
        if self.passed:
            which = "the" if self.tested == 1 else "any of the"
            return (f"passed {self.run} is not significantly worse than {self.baseline} on "
                    f"{which} {plural(self.tested, 'metric')} tested")
        return (f"FAILED {self.run} is worse than {self.baseline} on "
                + ", ".join(f"{c.metric}: {c.stats.delta:+.4f} (p adjusted {c.p_adjusted:.3g})"
                            for c in self.worse))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "fail_if_worse", "run": self.run, "baseline_run": self.baseline,
                "passed": self.passed,
                "worse": [{"metric": c.metric, "delta": c.stats.delta,
                           "p_adjusted": c.p_adjusted} for c in self.worse]}


def finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def tested(metrics: Sequence[str], names: Sequence[str], bases: list[str],
           values: Mapping[str, Mapping[str, np.ndarray]],
           corpus: Mapping[str, Mapping[str, float]], undefined: Mapping[str, Mapping[str, str]],
           shared: int, test: str, rounds: int, seed: int, level: float, alpha: float,
           correction: str, across: str = "pairs") -> tuple[list[Cell], list[Notice]]:
    """Every run of ``names`` against every baseline on every metric: the paired test over
    the users both score (``values``: run -> metric -> values over the ``shared`` users; a
    corpus metric: the difference of the two values of ``corpus``, no test), corrected over
    the tests of each metric (``across="pairs"``) or over every test of every metric at once
    (``"metrics"``). A baseline whose value is undefined (``undefined``: run -> metric ->
    why) leaves its tests out of the family, with a notice."""
    others = [n for n in names if n not in bases]
    stats = []
    for metric in metrics:
        for base in bases:
            for name in others:
                if is_corpus(metric):  # one value per run: its difference, without a test
                    s = corpus_comparison(corpus[base][metric], corpus[name][metric], shared)
                else:
                    s = on_scale(metric, compare(
                        *both_scored(values[base][metric], values[name][metric]), test,
                        rounds, seed, level))
                stats.append((metric, name, base, s))
    families = [family_of(metric, across) for metric, *_ in stats]
    adjusted = correct_within([s.p_value for *_, s in stats], families, correction)
    cells = [Cell(name, metric, s, p, bool(p < alpha) if math.isfinite(p) else None,
                  baseline=base)
             for (metric, name, base, s), p in zip(stats, adjusted, strict=True)]
    sizes = Counter(f for f, p in zip(families, adjusted, strict=True) if math.isfinite(p))
    notices: list[Notice] = []
    if len(bases) > 1:  # one baseline: the footer says it
        notices += [Notice("baseline_undefined", len(others),
                           {"metric": metric, "baseline": base,
                            "family": sizes[family_of(metric, across)],
                            "why": undefined[base][metric], "across": across})
                    for metric in metrics if not is_corpus(metric)
                    for base in bases if metric in undefined[base]]
    return cells, notices


def sized(cell: Cell, min_effect: Mapping[str, Any]) -> Cell:
    """The cell marked small when significant but below the minimum effect that matters
    (``min_effect``: metric, or ``"*"`` for every metric, -> analysis.power.Effect)."""
    effect = min_effect.get(cell.metric, min_effect.get("*"))
    if effect is None or not cell.tested or not cell.defined:
        return cell
    wanted = effect.absolute(cell.stats.mean_a)
    return dataclasses.replace(cell, small=bool(cell.significant) and
                               abs(cell.stats.delta) < wanted)


def both_scored(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The users both runs scored (a metric such as ild leaves some users without a value)."""
    both = ~(np.isnan(a) | np.isnan(b))
    return (a, b) if both.all() else (a[both], b[both])


def corpus_comparison(x: float, y: float, n: int) -> Comparison:
    """A corpus-level metric has no per-user values to pair: the difference of the two
    values ``x`` (the baseline's) and ``y``, with no test, interval or wins."""
    nan = math.nan
    return Comparison(n=n, mean_a=x, mean_b=y, delta=y - x, p_value=nan, effect_size=nan,
                      ci_low=nan, ci_high=nan, wins=0, ties=0, losses=0)


def on_scale(metric: str, c: Comparison) -> Comparison:
    """The comparison of a geometric mean (gm_map), whose per-user values are logs: the tests
    and the effect size stay on the logs; means, delta and interval come back to the metric's
    scale (the interval of the mean log ratio d maps to gm_a (e^d - 1))."""
    if REGISTRY[from_name(metric).name].overall != GEOMETRIC or not c.n:
        return c
    a, b = math.exp(c.mean_a), math.exp(c.mean_b)
    return dataclasses.replace(c, mean_a=a, mean_b=b, delta=b - a,
                               ci_low=a * math.expm1(c.ci_low), ci_high=a * math.expm1(c.ci_high))
