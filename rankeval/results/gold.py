"""What ``--gold`` adds to an evaluation (#48, SPEC §12): per metric, its mean over every query
from machine judgments corrected by a human-judged (gold) sample: the PPI++ estimate and the
machine-only, gold-only and bias estimates beside it, as plain data (``analysis.ppi``'s
numbers, named)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rankeval.analysis.ppi import Interval, PPIEstimate

UNIFORM = ("the gold queries are assumed a uniform random sample of the queries (draw them at "
           "random, not by hand)")
STRATIFIED = ("the gold queries are assumed a uniform random sample within each stratum of "
              "{column} (stratified PPI, Fisch et al. 2024; rates per stratum below)")
FEW = 30  # fewer gold queries than this: a warning (the normal interval is rough)


@dataclass(frozen=True)
class GoldMetric:
    """One metric under the gold sample: ``estimate`` (analysis.ppi), the gold queries left
    out because the metric is undefined on them under either judgments, and with
    ``--gold-plan`` the gold queries the half-width calls for (gold alone, PPI)."""

    metric: str
    estimate: PPIEstimate
    left_out: int = 0
    plan: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        out: dict[str, Any] = {
            "ppi": _interval(e.ppi), "lambda": _number(e.lam),
            "gold": _interval(e.gold), "machine": _interval(e.machine),
            "bias": _interval(e.bias),
            "gold_queries": e.gold_queries, "other_queries": e.other_queries,
            "effective_gold": _number(e.effective_gold), "left_out": self.left_out,
        }
        if e.strata:
            out["strata"] = [{"stratum": s.name, "weight": s.weight, "rate": s.rate,
                              "gold_queries": s.gold_queries,
                              "other_queries": s.other_queries, "lambda": _number(s.lam),
                              "ppi": _interval(s.ppi)} for s in e.strata]
        if self.plan is not None:
            out["plan"] = {"gold_alone": _number(self.plan[0]), "ppi": _number(self.plan[1])}
        return out


class _Sampled:
    """What every gold result says of its sample: the assumption, the method, whether it is
    small (the fields ``strata_column``, ``lam`` and ``gold_queries`` of the dataclass)."""

    strata_column: str | None
    lam: float | None
    gold_queries: int

    @property
    def assumption(self) -> str:
        """The sampling assumption every report states."""
        return assumption(self.strata_column)

    @property
    def method(self) -> str:
        """How the estimate was made, in words."""
        return method(self.lam, self.strata_column)

    @property
    def few(self) -> bool:
        """Fewer than ``FEW`` gold queries: the normal interval is rough."""
        return self.gold_queries < FEW


@dataclass(frozen=True)
class GoldEstimates(_Sampled):
    """Every metric's estimates under one gold file, and how they were made."""

    path: str
    level: float
    lam: float | None  # the fixed weight asked for; None: PPI++ tunes it per metric
    truth_queries: int  # queries in the machine-judged truth
    gold_queries: int  # queries in the gold file
    metrics: dict[str, GoldMetric]
    strata_column: str | None = None
    plan_half_width: float | None = None
    # metric -> why it has no estimate (a corpus metric, a geometric mean)
    not_estimated: dict[str, str] = field(default_factory=dict)
    # the gold file's query ids, and the truth's with each one's stratum (api.gold.Queries):
    # what --non-inferior and --equivalent pair a baseline's per-user file with
    sample: Any = field(default=None, repr=False, compare=False)
    every: Any = field(default=None, repr=False, compare=False)

    def estimates(self) -> dict[str, float]:
        """Metric -> its PPI estimate: the value the gates judge."""
        return {m: g.estimate.ppi.value for m, g in self.metrics.items()}

    def intervals(self) -> dict[str, Interval]:
        return {m: g.estimate.ppi for m, g in self.metrics.items()}

    def rows(self) -> Iterator[tuple[str, float]]:
        """(row name, value): ``ndcg@10[ppi]``, ``ndcg@10[ppi:low]``, ...,
        ``ndcg@10[lambda]``, ``ndcg@10[effective_gold]``, per stratum ``ndcg@10[ppi:S]``, and
        with --gold-plan ``ndcg@10[plan:ppi]``: the CSV report's rows, what trackers log."""
        for metric, g in self.metrics.items():
            e = g.estimate
            for what in ("machine", "gold", "ppi", "bias"):
                interval = getattr(e, what)
                yield f"{metric}[{what}]", interval.value
                yield f"{metric}[{what}:low]", interval.low
                yield f"{metric}[{what}:high]", interval.high
            yield f"{metric}[lambda]", e.lam
            yield f"{metric}[effective_gold]", e.effective_gold
            yield f"{metric}[gold_queries]", float(e.gold_queries)
            yield f"{metric}[other_queries]", float(e.other_queries)
            for s in e.strata:
                yield f"{metric}[ppi:{s.name}]", s.ppi.value
                yield f"{metric}[lambda:{s.name}]", s.lam
            if g.plan is not None:
                yield f"{metric}[plan:gold_alone]", g.plan[0]
                yield f"{metric}[plan:ppi]", g.plan[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "level": self.level, "method": self.method,
            "lambda": self.lam, "assumption": self.assumption,
            "truth_queries": self.truth_queries, "gold_queries": self.gold_queries,
            "strata_column": self.strata_column, "plan_half_width": self.plan_half_width,
            "gates_judge": "ppi",
            "estimates": {m: g.to_dict() for m, g in self.metrics.items()},
            "not_estimated": self.not_estimated,
        }


def assumption(strata_column: str | None) -> str:
    """The sampling assumption every report states."""
    if strata_column is None:
        return UNIFORM
    return STRATIFIED.format(column=repr(strata_column))


def method(lam: float | None, strata_column: str | None) -> str:
    """How the estimate was made, in words."""
    what = ("PPI++ (lambda tuned per metric)" if lam is None else
            "classic PPI (lambda 1)" if lam == 1 else
            "the gold sample alone (lambda 0)" if lam == 0 else
            f"PPI with lambda {lam:g}")
    return f"stratified {what}, per stratum" if strata_column else what


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _interval(i: Interval) -> dict[str, float | None]:
    return {"value": _number(i.value), "low": _number(i.low), "high": _number(i.high),
            "se": _number(i.se)}


@dataclass(frozen=True)
class GoldDifference:
    """One run against one baseline on one metric under the gold sample (``compare
    --gold``): ``estimate`` is PPI++ on the per-query differences (run - baseline), the gold
    queries labelled, the others unlabelled; its z-test's ``p_value``, adjusted over the
    metric's tests (or every metric's: ``correct_across``) by the comparison's correction;
    beside it the machine-only comparison's difference and significance (``compare``'s test
    on the machine judgments alone)."""

    run: str
    baseline: str
    metric: str
    estimate: PPIEstimate
    p_value: float
    p_adjusted: float
    significant: bool | None  # None: undefined (never "not significant")
    machine_delta: float
    machine_significant: bool | None
    left_out: int = 0

    @property
    def disagreement(self) -> tuple[str, ...]:
        """Where the machine-only and the PPI comparisons disagree: ``sign`` (the machine
        judgments and PPI put the run on opposite sides of the baseline), ``significance``
        (one finds the difference significant, the other not); () where they agree or one
        is undefined."""
        out = []
        ppi = self.estimate.ppi.value
        if math.isfinite(ppi) and math.isfinite(self.machine_delta) and (
                _sign(ppi) != _sign(self.machine_delta)):
            out.append("sign")
        if None not in (self.significant, self.machine_significant) and (
                self.significant != self.machine_significant):
            out.append("significance")
        return tuple(out)

    def to_dict(self) -> dict[str, Any]:
        e = self.estimate
        return {"run": self.run, "baseline": self.baseline, "metric": self.metric,
                "ppi": _interval(e.ppi), "lambda": _number(e.lam),
                "gold": _interval(e.gold), "machine": _interval(e.machine),
                "bias": _interval(e.bias),
                "p_value": _number(self.p_value), "p_adjusted": _number(self.p_adjusted),
                "significant": self.significant,
                "machine_delta": _number(self.machine_delta),
                "machine_significant": self.machine_significant,
                "disagreement": list(self.disagreement),
                "gold_queries": e.gold_queries, "other_queries": e.other_queries,
                "effective_gold": _number(e.effective_gold), "left_out": self.left_out}


@dataclass(frozen=True)
class GoldComparison(_Sampled):
    """What ``compare --gold`` adds: each run's difference from each baseline under the
    gold sample (``GoldDifference``), and how it was made."""

    path: str
    level: float
    lam: float | None
    truth_queries: int
    gold_queries: int
    alpha: float
    correction: str
    differences: list[GoldDifference]
    strata_column: str | None = None
    not_estimated: dict[str, str] = field(default_factory=dict)
    correct_across: str = "pairs"  # the correction's family: each metric's tests, or all
    # What compare's gates judge under the gold sample (``api.gold.gold_margin``): each run's
    # per-query values under the gold judgments (run -> metric -> values over the users
    # compared, NaN outside the sample), which of those users are in the sample, and each
    # one's stratum (None: no strata). Not part of the report.
    paired: tuple[dict[str, dict[str, Any]], Any, Any] | None = field(
        default=None, repr=False, compare=False)

    @property
    def disagreements(self) -> list[GoldDifference]:
        return [d for d in self.differences if d.disagreement]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "level": self.level, "method": self.method,
                "lambda": self.lam, "assumption": self.assumption,
                "truth_queries": self.truth_queries, "gold_queries": self.gold_queries,
                "strata_column": self.strata_column, "alpha": self.alpha,
                "correction": self.correction, "correct_across": self.correct_across,
                "differences": [d.to_dict() for d in self.differences],
                "disagreements": len(self.disagreements),
                "not_estimated": self.not_estimated}


@dataclass(frozen=True)
class GoldWorseVerdict:
    """``compare --gold --fail-if-worse`` for one run against one baseline: failed when a
    metric's PPI++ difference is significantly worse (after the correction, and by at least
    ``--min-effect``); a metric without a PPI estimate (a corpus metric) is judged on the
    machine judgments alone (``machine``, compare's cells)."""

    run: str
    baseline: str
    worse: tuple[GoldDifference, ...]
    machine: tuple[Any, ...]
    tested: int

    @property
    def passed(self) -> bool:
        return not self.worse and not self.machine

    def message(self) -> str:
        if self.passed:
            which = "the" if self.tested == 1 else "any of the"
            noun = "metric" if self.tested == 1 else "metrics"
            return (f"passed {self.run} is not significantly worse than {self.baseline} on "
                    f"{which} {self.tested} {noun} tested (PPI++ under the gold sample)")
        shown = [f"{d.metric}: {d.estimate.ppi.value:+.4f} (PPI++, p adjusted "
                 f"{d.p_adjusted:.3g})" for d in self.worse]
        shown += [f"{c.metric}: {c.stats.delta:+.4f} (machine judgments alone, p adjusted "
                  f"{c.p_adjusted:.3g})" for c in self.machine]
        return f"FAILED {self.run} is worse than {self.baseline} on " + ", ".join(shown)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "fail_if_worse", "run": self.run, "baseline_run": self.baseline,
                "passed": self.passed, "judged_by": "ppi",
                "worse": [{"metric": d.metric, "delta": _number(d.estimate.ppi.value),
                           "p_adjusted": _number(d.p_adjusted), "judged_by": "ppi"}
                          for d in self.worse]
                + [{"metric": c.metric, "delta": _number(c.stats.delta),
                    "p_adjusted": _number(c.p_adjusted), "judged_by": "machine"}
                   for c in self.machine]}


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)
