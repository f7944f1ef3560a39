"""``score(request, gates, per_user)``: what ``rankeval score`` runs once its options are
parsed (``api.request``): the evaluation, judged by its quality gates (``GateOptions``:
thresholds, a baseline report, segment gaps, and the margin gates against a baseline's
per-user file, ``against_file``), its per-user values written where asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Self

from rankeval.analysis.equivalence import Margin, Verdict, judge, parse
from rankeval.analysis.gates import GatePlan, plan_gates
from rankeval.api.per_user import from_files
from rankeval.api.request import BREAKDOWN, NEEDS, Check, Request
from rankeval.engines.pipeline import run
from rankeval.errors import OptionError
from rankeval.results.evaluation import Evaluation
from rankeval.settings import Settings

if TYPE_CHECKING:  # the type only: a score without --gold loads no PPI (the request applies it)
    from rankeval.api.gold import GoldRequest


@dataclass(frozen=True)
class GateOptions:
    """The quality gates of a score: ``fail_under``/``fail_over`` (``METRIC=VALUE``),
    ``max_drop`` against the ``baseline`` report (unless ``allow_settings_change``),
    ``max_gap`` between user segments, and the margins ``non_inferior``/``equivalent``
    against the ``baseline_per_user`` file at ``alpha``."""

    fail_under: Sequence[str] = ()
    fail_over: Sequence[str] = ()
    max_drop: Sequence[str] = ()
    baseline: str | None = None
    allow_settings_change: bool = False
    max_gap: Sequence[str] = ()
    non_inferior: Sequence[str] = ()
    equivalent: Sequence[str] = ()
    baseline_per_user: str | None = None
    alpha: float = 0.05

    @classmethod
    def take(cls, given: dict[str, Any]) -> Self:
        """The gates taken out of a command's keyword arguments."""
        return cls(**{f.name: given.pop(f.name) for f in fields(cls)})

    def checks(self, segmented: bool = False) -> dict[str, Check]:
        """``request``'s checks in score's order: the extra inputs, the gates (planned: the
        baseline report read), the breakdown, the margins; ``segmented``: --segments and
        --segment-by given (what --max-gap needs)."""
        return {"needs": NEEDS, "gates": lambda s: self.plan(s, segmented),
                "breakdown": BREAKDOWN, "margins": self.margins}

    def plan(self, settings: Settings, segmented: bool = False) -> GatePlan:
        return plan_gates(settings, self.fail_under, self.fail_over, self.max_drop,
                          self.baseline, self.allow_settings_change, self.max_gap,
                          segmented=segmented)

    def margins(self, settings: Settings) -> list[Margin]:
        """--non-inferior and --equivalent, checked before any input is read."""
        margins = [parse(kind, text, list(settings.metrics), settings)
                   for kind in ("non_inferior", "equivalent") for text in getattr(self, kind)]
        if margins and self.baseline_per_user is None:
            raise OptionError("{opt:non_inferior} and {opt:equivalent} need "
                              "{opt:baseline_per_user} FILE: the baseline run's per-user "
                              "values (its --per-user file)")
        if self.baseline_per_user is not None and not margins:
            raise OptionError("{opt:baseline_per_user} is for {opt:non_inferior} and "
                              "{opt:equivalent}: give one")
        if not 0 < self.alpha < 1:
            raise OptionError("{opt:alpha} must lie strictly between 0 and 1")
        return margins


def score(request: Request, gates: GateOptions, per_user: str | None = None,
          gold: GoldRequest | None = None) -> Evaluation:
    """Run ``request`` (its checks ``gates.checks()``, or the gates are planned here), judge
    it by the gates, the margins against the baseline's per-user file; ``per_user``: where
    the engine writes the per-user values; ``gold``: the human judgments whose PPI
    estimates the gates then judge (``score --gold``)."""
    checked: Mapping[str, Any] = request.checked
    settings, breakdown = request.job.settings, request.job.breakdown
    plan = checked["gates"] if "gates" in checked else gates.plan(
        settings, bool(breakdown.segments is not None and breakdown.segment_by))
    margins = checked["margins"] if "margins" in checked else gates.margins(settings)
    result = run(request.engine, request.job)
    if gold is not None:
        result = gold.applied(request.engine, request.job, result)
    result = result.judged(plan)
    if margins:
        assert gates.baseline_per_user is not None  # the margins' check says so
        result = result.with_verdicts(against_file(margins, result, gates.baseline_per_user,
                                                   gates.alpha, gold=gold))
    if per_user is not None:
        request.engine.write_per_user(result, per_user)
    return result


def against_file(margins: list[Margin], ev, path: str, alpha: float,
                 run: str = "this run", gold: GoldRequest | None = None) -> list[Verdict]:
    """The margin gates of ``score``: this evaluation's per-user values against a baseline's
    per-user file (``score --per-user`` of the baseline run), the users paired by id; with
    ``gold`` (``score --gold``), the PPI estimate of each paired difference, where the
    baseline's file holds its gold values too."""
    try:
        paired, _ = from_files(path, ev.per_user_table(), [m.metric for m in margins])
        if gold is None or ev.gold is None:
            return [judge(m, run, *paired[m.metric], alpha) for m in margins]
        return gold.margins(margins, ev, path, paired, alpha, run)
    except OptionError as exc:
        raise OptionError(f"{{opt:baseline_per_user}} {path}: {exc.render()}") from None
