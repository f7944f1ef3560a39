"""Several runs against one truth (``rankeval compare``, ``rankeval.compare``): the options
checked before any read, the truth, extras and segments read once, each run read and
evaluated, the users every run evaluates paired, and then ``analysis``: each run tested
against the baselines (``analysis.baselines``), where the differences lie
(``analysis.changes``), all pairs, the margin gates. The result is a
``results.comparison.CompareResult``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Unpack

import numpy as np
import pyarrow.compute as pc

from rankeval.analysis.allpairs import TUKEY, corrected_across
from rankeval.analysis.allpairs import all_pairs as every_pair
from rankeval.analysis.baselines import WorseVerdict, sized, tested
from rankeval.analysis.changes import intervals_of, most_changed, segment_cells
from rankeval.analysis.choices import check_tests
from rankeval.analysis.equivalence import judge, parse
from rankeval.analysis.overlap import check_p, overlap
from rankeval.analysis.power import Effect, large_sample_notices
from rankeval.analysis.segments import parse_by, with_bins
from rankeval.analysis.significance import CORRECTIONS, correct_within, family_of
from rankeval.api.gold import GoldRequest, queries_of
from rankeval.api.gold_compare import compared, gold_margin, gold_worse
from rankeval.api.request import NEEDS, Options, request
from rankeval.engines.finish import evaluate_inputs
from rankeval.errors import OptionError
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.extras import load_extras
from rankeval.io.load import Truth, load_predictions, load_truth, open_input
from rankeval.io.roles import swapped
from rankeval.io.run_names import run_names
from rankeval.names import from_name, is_corpus
from rankeval.notices import Notice
from rankeval.registry import reads
from rankeval.results.comparison import CompareResult, RunResult
from rankeval.results.gold import GoldComparison


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
    correct_across: str = "pairs",
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
    gold: Any = None,
    gold_format: str | None = None,
    ppi_lambda: float | None = None,
    gold_strata: str | None = None,
    reading: Mapping[str, Any] | None = None,
    **options: Unpack[Options],
) -> CompareResult:
    """Compare runs against ``truth``: each run's means, and each run against the baseline
    (or each of several) user by user, with a paired test per metric corrected over the
    tests of that metric (or of every metric: ``correct_across``).

    ``runs``: paths or in-memory tables (pandas, polars, Arrow), named by ``names`` (default:
    file stems, ``run1``... for tables), or a mapping name -> run. ``baseline_run``: the run
    (or list of runs) the others are tested against, default the first. ``test``: ``t``,
    ``wilcoxon``, ``randomization`` or ``bootstrap`` (``rounds``, ``seed``); ``correction``:
    ``holm``, ``bonferroni``, ``bh``, ``by`` or ``none``; ``correct_across``: the family it
    spans, ``pairs`` (the tests of one metric@K: a family per metric and K) or ``metrics``
    (every test of every metric and K, one family); ``confidence``: of the intervals;
    ``min_effect``: ``"0.01"``, ``"1%"`` or ``"ndcg@10=0.005"`` (the smallest difference that
    matters); ``all_pairs``: also every pair of runs (``True``: randomised Tukey HSD; or a
    correction's name); ``non_inferior``, ``equivalent``: margin gates (``"ndcg@10=1%"``);
    ``fail_if_worse``: a gate that fails when a run is significantly worse than a baseline;
    ``segments`` with ``segment_by``: the tests within each user segment; ``rbo``: also the
    rank-biased overlap of each run with each baseline, per user, with that persistence
    (``CompareResult.overlaps``; see ``rbo``). ``gold``: human judgments (qrels) of a
    uniform random sample of ``truth``'s queries, ``truth`` being machine-judged: each
    difference is then also estimated by PPI++ from the per-query differences (SPEC §12),
    with its ``confidence`` interval and p-value, corrected as the tests are
    (``CompareResult.gold``, a ``results.gold.GoldComparison``; ``gold_format``,
    ``ppi_lambda``, ``gold_strata`` as in ``evaluate_gold``). Every other keyword
    is ``evaluate``'s (``api.request.Options``: settings, column names, ``compat``,
    ``preds_format``, ``truth_format``, ``train``, ``catalog``, ``item_features``...).

    >>> r = compare({"main": "main.csv", "pr": "pr.csv"}, "truth.csv", "ndcg@10")
    >>> r.cell("pr", "ndcg@10").stats.delta, r.passed
    """
    labels, paths = _named(runs, names)
    # the options in compare's order, before any read; the runs are read one by one below
    preds_format, truth_format = options.get("preds_format"), options.get("truth_format")
    made = request(None, truth, metrics, k, options, engine_options={}, reading=reading, checks={
        "rbo": lambda s: None if rbo is None else check_p(rbo),
        "needs": NEEDS,
        "segments": lambda s: check_segments(segments, _listed(segment_by), segment_bins),
        "margins": lambda s: parse_margins(_listed(non_inferior), _listed(equivalent), s),
        "min_effect": lambda s: parse_min_effect(_listed(min_effect), list(s.metrics))})
    job, checked = made.job, made.checked
    wanted = None
    if gold is not None:
        wanted = GoldRequest(gold, gold_format, ppi_lambda, gold_strata, confidence)
        wanted.check_options([*paths, truth])
    elif ppi_lambda is not None or gold_strata is not None or gold_format is not None:
        raise OptionError("{opt:ppi_lambda}, {opt:gold_strata} and {opt:gold_format} are for "
                          "{opt:gold} FILE: give one")
    truth_table, judged, extras = _read(truth, truth_format, job.reading, job.columns,
                                        job.extras, job.settings)
    with_gold = None
    if wanted is not None:
        queries = queries_of(truth, gold, wanted, truth_format, job.columns, job.reading)
        _, human = _truth(gold, gold_format or truth_format, job.reading, job.columns,
                          job.settings)
        with_gold = (wanted, human, queries)
    return compare_runs(
        judged, list(zip(labels, paths, strict=True)), job.settings, baseline=baseline_run,
        tests=Tests(test, rounds, seed, alpha, correction, confidence, correct_across),
        top_changes=top_changes, preds_format=preds_format,
        columns=job.columns, truth_table=truth_table, reading=job.reading, extras=extras,
        segments=segments, segment_by=_listed(segment_by), segment_bins=segment_bins,
        intervals=intervals, margins=checked["margins"],
        all_pairs=("tukey" if all_pairs is True else all_pairs or None),
        min_effect=checked["min_effect"], fail_if_worse=fail_if_worse, rbo=checked["rbo"],
        gold=with_gold)


def _read(truth: Any, truth_format: str | None, reading: Mapping[str, Any] | None,
          columns: Mapping[str, Any], extra: Mapping[str, Any], settings):
    """The truth (as opened, and loaded) and the extra inputs, read once for every run."""
    table, loaded = _truth(truth, truth_format, reading, columns, settings)
    return table, loaded, load_extras(extra, columns, reading)


def _truth(truth: Any, truth_format: str | None, reading: Mapping[str, Any] | None,
           columns: Mapping[str, Any], settings) -> tuple[Any, Truth]:
    """Judgments (the truth, or the gold file), as opened and loaded."""
    table = open_input(truth, "truth", truth_format, reading)
    return table, load_truth(table, columns, subtopics=reads(settings.specs, "subtopics"))


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
        parse_by(with_bins(segment_by, bins))


def parse_margins(non_inferior: list[str], equivalent: list[str], settings) -> list:
    """The margin gates (``analysis.equivalence.Margin``), checked before any input is read."""
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


@dataclass(frozen=True)
class Tests:
    """How each run is tested against a baseline: the paired ``test`` (``rounds`` and
    ``seed`` for the resampling ones), its level ``alpha``, the ``correction`` over each
    metric's tests (or every metric's: ``correct_across``), and the confidence of the
    intervals (``ci_level``)."""

    test: str = "t"
    rounds: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    correction: str = "holm"
    ci_level: float = 0.95
    correct_across: str = "pairs"  # the family: each metric@K's tests, or every metric's


def compare_runs(
    truth: Truth,
    runs: list[tuple[str, str]],
    settings,
    *,
    baseline: str | Sequence[str] | None = None,
    tests: Tests = Tests(),
    top_changes: int = 0,
    preds_format: str | None = None,
    columns: Mapping[str, str | None] | None = None,
    truth_table=None,
    reading: Mapping[str, Any] | None = None,
    extras=None,
    segments: Any = None,
    segment_by: Any = (),
    segment_bins: str | int | None = None,
    intervals: bool = False,
    margins: Any = (),
    all_pairs: str | None = None,
    min_effect: dict[str, Any] | None = None,
    fail_if_worse: bool = False,
    rbo: float | None = None,
    gold: tuple[Any, Truth, Any] | None = None,
) -> CompareResult:
    """Evaluate every (name, path) run against ``truth`` and test each against the baseline,
    or against each of several (``baseline``: a run name or a list of them; default the
    first run), corrected over every test of a metric (``correct_across="pairs"``) or of
    every metric (``"metrics"``); ``margins``
    (``analysis.equivalence.Margin``): non-inferiority and equivalence gates; ``all_pairs``:
    also every pair of runs, by the randomised Tukey HSD test (``"tukey"``) or the paired test
    corrected over all pairs (a correction's name); ``fail_if_worse``: a gate per run and
    baseline that fails when the run is significantly worse on a metric; ``gold``: (the
    ``api.gold.GoldRequest``, the gold judgments loaded, their queries and the truth's):
    each difference also estimated by PPI++ (``api.gold.compared``)."""
    test, rounds, seed = tests.test, tests.rounds, tests.seed
    alpha, correction, ci_level = tests.alpha, tests.correction, tests.ci_level
    correct_across = tests.correct_across
    _check_options(test, correction, alpha, ci_level, rounds, correct_across, all_pairs)
    names = [n for n, _ in runs]
    bases = _baselines(baseline, names)
    results, loaded = _evaluated(runs, truth, settings, preds_format, columns or {},
                                 truth_table, reading, extras,
                                 keep=rbo is not None or gold is not None)
    per_user = [m for m in settings.metrics if not is_corpus(m)]
    shared, values, notices = _paired(results, per_user)
    by_name = {r.name: r.evaluation for r in results}
    cells, left_out = tested(by_name[bases[0]].settings.metrics, names, bases, values,
                             {n: e.metrics for n, e in by_name.items()},
                             {n: e.undefined for n, e in by_name.items()}, len(shared), test,
                             rounds, seed, ci_level, alpha, correction, correct_across)
    if min_effect:
        cells = [sized(c, min_effect) for c in cells]
    result = CompareResult(
        settings, results, bases, shared, values, cells,
        {"test": test, "alpha": alpha, "correction": correction,
         "correct_across": correct_across, "rounds": rounds,
         "seed": seed, "ci_level": ci_level, "truth": truth.source.path},
        notices + left_out,
    )
    if gold is not None:
        wanted, human, queries = gold
        compared(result, loaded, human, settings, extras, queries, wanted)
        if correct_across != "pairs" and result.gold is not None:
            result.gold = gold_across(result.gold, correct_across)
    _decide(result, all_pairs, margins, fail_if_worse, min_effect or {})
    if top_changes:
        result.top = most_changed(result.values, result.shared_users, result.baseline,
                                  result.candidates, result.metrics, top_changes)
    if rbo is not None:
        result.overlaps = [overlap(loaded[name], loaded[base], settings, (name, base), rbo,
                                   shared) for base in bases for name in result.candidates]
    if intervals:
        result.intervals = intervals_of(result.values, rounds, seed, ci_level)
    if segments is not None:
        table = open_input(segments, "segments", None, reading)
        result.segments = segment_cells(result.values, result.shared_users, table,
                                        with_bins(segment_by, segment_bins), result.metrics,
                                        result.baselines, result.candidates, result.options)
    return result


def _evaluated(runs: list[tuple[str, str]], truth: Truth, settings, preds_format, cols,
               truth_table, reading, extras, keep: bool) -> tuple[list[RunResult], dict]:
    """Each run read and evaluated; ``keep``: its loaded predictions kept too, by name (the
    rank-biased overlap reads the lists again, without the truth)."""
    results, loaded = [], {}
    for name, path in runs:
        table = open_input(path, "predictions", preds_format, reading)
        if truth_table is not None:
            swapped(table, truth_table)
        preds = load_predictions(table, cols)
        results.append(RunResult(name, path, evaluate_inputs(preds, truth, settings, extras)))
        if keep:
            loaded[name] = preds
    return results, loaded


def _baselines(baseline: str | Sequence[str] | None, names: list[str]) -> list[str]:
    """The baseline runs named (default: the first run), checked: each a run, none twice,
    and some run left to test against them."""
    bases = ([names[0]] if baseline is None else
             [baseline] if isinstance(baseline, str) else list(baseline)) or [names[0]]
    for base in bases:
        if base not in names:
            raise OptionError(f"{{option}} {base!r} is not a run name ({', '.join(names)})",
                              "baseline_run")
    if len(set(bases)) != len(bases):
        raise OptionError("{option} names a run twice", "baseline_run")
    if len(bases) == len(names):
        raise OptionError("every run is a baseline: leave one out of {option} to test it "
                          "against them", "baseline_run")
    return bases


def _decide(result: CompareResult, all_pairs: str | None, margins: Any,
            fail_if_worse: bool, min_effect: Mapping[str, Any]) -> None:
    """What the comparison decides beyond the baseline's tests: the large-sample notice,
    every pair of runs (``all_pairs``), the gates (non-inferiority, equivalence, worse).
    Under ``--gold`` the gates judge the PPI++ differences (``api.gold``), and a metric
    without a PPI estimate the machine judgments alone, saying so."""
    o = result.options
    names = [r.name for r in result.runs]
    result.notices += large_sample_notices(result)
    if all_pairs is not None:
        if all_pairs not in (TUKEY, *CORRECTIONS):
            raise OptionError(f"all_pairs must be {TUKEY} or a correction "
                              f"({', '.join(CORRECTIONS)})")
        joint = o["correct_across"] != "pairs"  # the raw p-values, corrected together below
        result.pairs = [every_pair(m, names, [result.values[n][m] for n in names],
                                   "none" if joint else all_pairs, o["alpha"], o["test"],
                                   o["rounds"], o["seed"], o["ci_level"])
                        for m in result.metrics if not is_corpus(m)]
        if joint:
            result.pairs = corrected_across(result.pairs, all_pairs, o["alpha"])
    if margins:
        result.gates = [gold_margin(result, m, n, base) or _machine_margin(result, m, n, base)
                        for m in margins for base in result.baselines
                        for n in result.candidates]
    if fail_if_worse:
        result.gates += [_worse(result, n, base, min_effect) for base in result.baselines
                         for n in result.candidates if n != base]


def _machine_margin(result: CompareResult, margin, run: str, base: str):
    verdict = judge(margin, run, result.values[base][margin.metric],
                    result.values[run][margin.metric], result.options["alpha"], base)
    if result.gold is None:
        return verdict
    return dataclasses.replace(verdict, judged_by=f"the machine judgments alone: "
                                                  f"{margin.metric} has no PPI estimate")


def _worse(result: CompareResult, run: str, base: str, min_effect: Mapping[str, Any]):
    if result.gold is not None:
        def small(metric: str, delta: float, base_mean: float) -> bool:
            effect = min_effect.get(metric, min_effect.get("*"))
            return effect is not None and abs(delta) < effect.absolute(base_mean)

        return gold_worse(result, run, base, small)
    worse = result.worse
    return WorseVerdict(run, base, tuple(c for c in worse if c.run == run and c.baseline == base),
                        sum(c.run == run and c.baseline == base and c.tested
                            for c in result.cells))


def _check_options(test: str, correction: str, alpha: float, ci_level: float,
                   rounds: int, across: str = "pairs", all_pairs: str | None = None) -> None:
    check_tests(test, correction, across, rounds)
    if all_pairs == TUKEY and across != "pairs":
        raise OptionError("{opt:all_pairs} by Tukey's HSD controls the pairs of each metric "
                          "alone: with {opt:correct_across} metrics give {opt:correction} "
                          f"({', '.join(CORRECTIONS)}) for the pairs")
    if not 0 < alpha < 1 or not 0 < ci_level < 1:
        raise OptionError("{opt:alpha} and {opt:confidence} must lie strictly between 0 and 1")


def _paired(results: list[RunResult], metrics):
    """The users every run evaluates (all of them unless skip_missing_users drops some per
    run), in the first run's order, and each run's values aligned to them by id. Arrow's
    hash joins: numpy's set functions on object arrays are quadratic."""
    first = results[0].evaluation.user_id_array
    keep = np.ones(len(first), dtype=bool)
    for r in results[1:]:
        keep &= to_numpy(pc.is_in(first, value_set=r.evaluation.user_id_array))
    shared = first.filter(from_numpy(keep))
    notices = []
    values: dict[str, dict[str, np.ndarray]] = {}
    for r in results:
        ids = r.evaluation.user_id_array
        r.dropped = int(len(ids) - len(shared))
        if r.dropped:
            notices.append(Notice("users_not_shared", r.dropped, {"run": r.name}))
        at = to_numpy(pc.index_in(shared, value_set=ids)).astype(np.int64)
        values[r.name] = {m: r.evaluation.values(m)[at] for m in metrics}
    if len(shared) == 0:
        raise OptionError("the runs share no evaluated user: nothing to compare")
    return to_numpy(shared), values, notices


def gold_across(gold: GoldComparison, across: str) -> GoldComparison:
    """The PPI differences' p-values corrected over the family ``across`` names (``metrics``:
    every metric's tests at once) instead of each metric's, significance redone."""
    found = gold.differences
    adjusted = correct_within([d.p_value for d in found],
                              [family_of(d.metric, across) for d in found], gold.correction)
    return dataclasses.replace(gold, correct_across=across, differences=[
        dataclasses.replace(d, p_adjusted=p,
                            significant=bool(p < gold.alpha) if math.isfinite(p) else None)
        for d, p in zip(found, adjusted, strict=True)])
