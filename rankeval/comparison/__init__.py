"""Several runs against one truth (``rankeval compare``, ``rankeval.compare``): each run
evaluated, each tested against the baseline runs user by user, and what follows from the tests.

``runs``: the evaluation and the paired tests; ``result``: what they produce;
``changes``: where the differences lie (segments, users, intervals).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rankeval.comparison.result import Cell, CompareResult, RunResult
from rankeval.comparison.runs import compare_runs
from rankeval.errors import OptionError
from rankeval.io.extras import check_needs, load_extras
from rankeval.io.run_names import run_names
from rankeval.names import is_corpus

__all__ = ["Cell", "CompareResult", "RunResult", "compare", "compare_runs", "run_names"]


def compare(
    runs: Sequence[Any] | Mapping[str, Any],
    truth: Any,
    metrics: Any = None,
    k: Any = None,
    *,
    names: Sequence[str] | None = None,
    baseline_run: str | Sequence[str] | None = None,
    test: str = "t",
    rounds: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    confidence: float = 0.95,
    intervals: bool = False,
    top_changes: int = 0,
    min_effect: str | Sequence[str] = (),
    all_pairs: bool | str = False,
    non_inferior: str | Sequence[str] = (),
    equivalent: str | Sequence[str] = (),
    fail_if_worse: bool = False,
    rbo: float | None = None,
    segments: Any = None,
    segment_by: str | Sequence[str] = (),
    segment_bins: str | int | None = None,
    compat: str | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
    reading: dict[str, Any] | None = None,
    **options: Any,
) -> CompareResult:
    """Compare runs against ``truth``: each run's means, and each run against the baseline
    (or each of several) user by user, with a paired test per metric corrected over the
    tests of that metric.

    ``runs``: paths or in-memory tables (pandas, polars, Arrow), named by ``names`` (default:
    file stems, ``run1``... for tables), or a mapping name -> run. ``baseline_run``: the run
    (or list of runs) the others are tested against, default the first. ``test``: ``t``,
    ``wilcoxon``, ``randomization`` or ``bootstrap`` (``rounds``, ``seed``); ``correction``:
    ``holm``, ``bonferroni``, ``bh``, ``by`` or ``none``; ``confidence``: of the intervals;
    ``min_effect``: ``"0.01"``, ``"1%"`` or ``"ndcg@10=0.005"`` (the smallest difference that
    matters); ``all_pairs``: also every pair of runs (``True``: randomised Tukey HSD; or a
    correction's name); ``non_inferior``, ``equivalent``: margin gates (``"ndcg@10=1%"``);
    ``fail_if_worse``: a gate that fails when a run is significantly worse than a baseline;
    ``segments`` with ``segment_by``: the tests within each user segment; ``rbo``: also the
    rank-biased overlap of each run with each baseline, per user, with that persistence
    (``CompareResult.overlaps``; see ``rbo``). Every other keyword
    is ``evaluate``'s (settings, column names, ``train``, ``catalog``, ``item_features``).

    >>> r = compare({"main": "main.csv", "pr": "pr.csv"}, "truth.csv", "ndcg@10")
    >>> r.cell("pr", "ndcg@10").stats.delta, r.passed
    """
    from rankeval.engines import EXTRA
    from rankeval.io.columns import COLUMN_OPTIONS
    from rankeval.settings import make_settings

    labels, paths = _named(runs, names)
    rest = dict(options)
    columns = {name: rest.pop(name, None) for name in COLUMN_OPTIONS}
    extra = {n: rest.pop(n, None) for n in (*EXTRA, *(f"{n}_format" for n in EXTRA))}
    settings = make_settings(metrics, k, compat=compat, **rest)
    if rbo is not None:
        from rankeval.analysis.overlap import check_p

        rbo = check_p(rbo)
    check_needs(settings, {n for n in EXTRA if extra[n] is not None})
    check_segments(segments, _listed(segment_by), segment_bins)
    margins = parse_margins(_listed(non_inferior), _listed(equivalent), settings)
    wanted = parse_min_effect(_listed(min_effect), list(settings.metrics))
    truth_table, judged, extras = _read(truth, truth_format, reading, columns, extra, settings)
    return compare_runs(
        judged, list(zip(labels, paths, strict=True)), settings, baseline=baseline_run,
        test=test, rounds=rounds, seed=seed, alpha=alpha, correction=correction,
        ci_level=confidence, top_changes=top_changes, preds_format=preds_format,
        columns=columns, truth_table=truth_table, reading=reading, extras=extras,
        segments=segments, segment_by=_listed(segment_by), segment_bins=segment_bins,
        intervals=intervals, margins=margins,
        all_pairs=("tukey" if all_pairs is True else all_pairs or None), min_effect=wanted,
        fail_if_worse=fail_if_worse, rbo=rbo)


def _read(truth: Any, truth_format: str | None, reading: dict[str, Any] | None,
          columns: dict[str, Any], extra: dict[str, Any], settings):
    """The truth (as opened, and loaded) and the extra inputs, read once for every run."""
    from rankeval.io.load import load_truth, open_input
    from rankeval.registry import reads

    table = open_input(truth, "truth", truth_format, reading)
    extras = load_extras(extra, columns, reading)
    named = {f"{c}_col": columns.get(f"{c}_col") for c in ("user", "item", "relevance", "subtopic")}
    return table, load_truth(table, **named, subtopics=reads(settings.specs, "subtopics")), extras


def _named(runs: Sequence[Any] | Mapping[str, Any], names: Sequence[str] | None
           ) -> tuple[list[str], list[Any]]:
    """The runs' names and the runs: a mapping's keys, else ``names`` or the file stems."""
    if isinstance(runs, Mapping):
        if names is not None:
            raise OptionError("give run names as the keys of {opt:runs} or as {opt:names}, "
                              "not both")
        labels, paths = list(runs), list(runs.values())
    else:
        paths = list(runs)
        labels = run_names(paths, names)
    if len(paths) < 2:
        raise OptionError("compare needs at least two runs and the truth")
    return labels, paths


def _listed(value: str | Sequence[str] | None) -> list[str]:
    """One value or several, as a list (``"ndcg@10=1%"`` or ``["ndcg@10=1%", ...]``)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def check_segments(segments: Any, segment_by: Sequence[str], bins: str | int | None) -> None:
    """The segment options, before any input is read."""
    given = segments is not None and not (isinstance(segments, str) and not segments)
    if given != bool(segment_by):
        raise OptionError("{opt:segments} FILE and {opt:segment_by} COLUMN go together")
    if bins and not segment_by:
        raise OptionError("{opt:segment_bins} cuts {opt:segment_by} columns: give one")
    if segment_by:
        from rankeval.analysis.segments import parse_by, with_bins

        parse_by(with_bins(segment_by, bins))


def parse_margins(non_inferior: list[str], equivalent: list[str], settings) -> list:
    """The margin gates (``analysis.equivalence.Margin``), checked before any input is read."""
    from rankeval.analysis.equivalence import parse

    margins = [parse(kind, text, list(settings.metrics), settings)
               for kind, texts in (("non_inferior", non_inferior), ("equivalent", equivalent))
               for text in texts]
    corpus = [m.text for m in margins if is_corpus(m.metric)]
    if corpus:
        raise OptionError(f"{corpus[0]}: a corpus-level metric has one value per run, so no "
                          "interval to gate on")
    return margins


def parse_min_effect(texts: list[str], metrics: list[str]) -> dict:
    """``min_effect`` values: metric (or ``"*"`` for all) -> ``analysis.power.Effect``."""
    from rankeval.analysis.power import Effect
    from rankeval.names import from_name

    out = {}
    for text in texts:
        word, eq, value = text.rpartition("=")
        name = str(from_name(word.strip())) if eq else "*"
        if eq and name not in metrics:
            raise OptionError(f"{{opt:min_effect}} {text}: {name} is not computed by this run "
                              f"(computed: {', '.join(metrics)})")
        try:
            out[name] = Effect.parse(value)
        except OptionError:
            raise OptionError(f"{{opt:min_effect}} {text!r}: expected [METRIC=]DELTA, e.g. "
                              "0.01, ndcg@10=0.005 or 1% (a positive number)") from None
    return out
