"""One request: a verb's keywords (the library's, or a command's options) made into an
engine's ``Job``, every option checked before any input is read. Every verb that scores runs
builds its job here (``evaluate``, ``validate``, ``score``, ``power``, ``compare``,
``evaluate_scores``, ``rankeval.spark.evaluate``, ``rankeval.ray.evaluate``), and the keywords
they share are declared once (``Options``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rankeval.analysis.distribution import parse_stats
from rankeval.analysis.segments import parse_by, with_bins
from rankeval.engines.interface import Breakdown, Engine, Inputs, Job
from rankeval.engines.pipeline import run
from rankeval.engines.registry import engine_options as own_options
from rankeval.engines.registry import get
from rankeval.errors import OptionError
from rankeval.io.extras import check_needs
from rankeval.io.options import Columns, ExtraInputs, Reading
from rankeval.results.evaluation import Evaluation
from rankeval.settings import EvaluateOptions, Settings, make_settings


class Options(EvaluateOptions, total=False):
    """The keywords of every verb that scores a run, beyond its own: the settings, the
    column names (``io.options.Columns``), the conventions preset, the inputs' formats and
    the extra inputs (``io.options.ExtraInputs``). ``evaluate``, ``rankeval.spark.evaluate``
    and ``rankeval.ray.evaluate`` take them as ``**options``."""

    compat: str | None
    config: str | None  # the configuration file read (named in the reports)
    preds_format: str | None
    truth_format: str | None
    train: Any
    catalog: Any
    item_features: Any
    item_groups: Any
    propensity: Any
    exclude: Any
    subtopic_col: str | None
    sample_col: str | None


# Two steps of the builder a verb places among its own checks (``checks``): the metrics'
# extra inputs (``io.extras.check_needs``), and the breakdown (``--stats``, ``--segments``)
NEEDS = "needs"
BREAKDOWN = "breakdown"
Check = Callable[[Settings], Any] | str
DEFAULT_CHECKS: Mapping[str, Check] = {"needs": NEEDS, "breakdown": BREAKDOWN}


@dataclass(frozen=True)
class Request:
    """An engine and the job it runs, and what the verb's checks returned, by name."""

    engine: Engine
    job: Job
    checked: Mapping[str, Any] = field(default_factory=dict)


def evaluation(predictions: Any, truth: Any, metrics: str | Iterable[str] | None,
               k: int | str | Iterable[int | str] | None, options: Mapping[str, Any],
               engine: str = "local", engine_options: Mapping[str, Any] | None = None
               ) -> Evaluation:
    """``rankeval.evaluate``'s run: its request, on its engine (``evaluate_gold`` runs two)."""
    made = request(predictions, truth, metrics, k, options, engine=engine,
                   engine_options=engine_options or {}, judgment_groups=True)
    return run(made.engine, made.job)


def refuse_judgment_groups(settings: Settings) -> None:
    """An OptionError when ``judgment_groups`` is set for a verb that reads the truth as
    plain judgments (each (user, group) pair is scored by the engine's ``score`` alone:
    ``evaluate`` and ``rankeval score``; ``request(judgment_groups=True)``)."""
    if settings.judgment_groups:
        raise OptionError("{opt:judgment_groups} is read by rankeval score (and "
                          "rankeval.evaluate) only; this command reads plain judgments",
                          "judgment_groups")
    if settings.zscores is not None:  # score's engine turns its values into z-scores
        raise OptionError("{opt:zscores} is read by rankeval score (and rankeval.evaluate) "
                          "only; this command reports the metrics' own values", "zscores")
    if settings.preferences:  # scored apart: api.preferences
        raise OptionError("{opt:preferences} is read by rankeval score (and "
                          "rankeval.evaluate) only; this command reads plain judgments",
                          "preferences")


def request(
    predictions: Any,
    truth: Any,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    engine: str | None = "local",
    engine_options: Mapping[str, Any] | None = None,
    reading: Mapping[str, Any] | None = None,
    breakdown: Mapping[str, Any] | None = None,
    intervals: tuple[float, int, int] | None = None,
    keep_values: bool = False,
    quiet: bool = True,
    checks: Mapping[str, Check] = DEFAULT_CHECKS,
    extras_for: Callable[[Settings], Mapping[str, Any]] | None = None,
    judgment_groups: bool = False,
) -> Request:
    """``options``: a verb's keywords (``Options``; anything else is the settings'
    TypeError); ``engine_options``: the engine's own (None: taken out of ``options``, as a
    command's are); ``reading``: delimiter and encodings (``io.options.Reading``: given
    apart, never one of ``options``); ``breakdown``: ``stats``, ``segments``, ``segment_by``,
    ``segment_bins``, ``gaps``. In order: the engine, its options, the settings, the extra
    inputs a verb supplies itself (``extras_for``, for the ones not given), then ``checks``
    in their order (``NEEDS`` and ``BREAKDOWN`` among the verb's own: name -> a function of
    the settings, whose value ``Request.checked`` keeps), the job, the engine's check."""
    chosen = get(engine)
    rest = dict(options or {})
    own = own_options(chosen, dict(engine_options) if engine_options is not None else rest)
    inputs = Inputs(predictions, truth, rest.pop("preds_format", None),
                    rest.pop("truth_format", None))
    columns, extras = Columns.take(rest), ExtraInputs.take(rest)
    settings = make_settings(metrics, k, compat=rest.pop("compat", None),
                             config=rest.pop("config", None), **rest)
    if not judgment_groups or settings.preferences:
        refuse_judgment_groups(settings)
    if extras_for is not None:
        supplied = extras_for(settings)
        extras = replace(extras, **{n: v for n, v in supplied.items() if extras[n] is None})
    checked, split = {}, Breakdown()
    for name, check in checks.items():
        if check == NEEDS:
            check_needs(settings, extras.given())
        elif check == BREAKDOWN and breakdown is not None:
            split = checked_breakdown(**breakdown)
        elif callable(check):
            checked[name] = check(settings)
    job = Job(inputs, settings, columns, Reading.of(reading), extras, own, split, intervals,
              keep_values, quiet)
    chosen.check(job)
    return Request(chosen, job, checked)


def checked_breakdown(stats: str | None = None, segments: Any = None,
                      segment_by: str | Sequence[str] = (), segment_bins: str | None = None,
                      gaps: bool = False) -> Breakdown:
    """--stats and --segments/--segment-by read before any input, so that a typo costs no
    scoring; the --segment-by columns with --segment-bins applied."""
    by = with_bins(segment_by, segment_bins)
    if stats:
        parse_stats(stats)
    if by and segments is None:
        raise OptionError("{opt:segment_by} needs {opt:segments} FILE")
    if segment_bins and not by:
        raise OptionError("{opt:segment_bins} cuts --segment-by columns: give one")
    if segments is not None:
        parse_by(by)
    return Breakdown(stats, segments, by, gaps)
