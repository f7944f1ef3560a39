"""Several runs evaluated against one truth and tested against the baselines: the paired
test of every metric, corrected over each metric's tests, and the gates beyond them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow.compute as pc

from rankeval.analysis.changes import most_changed
from rankeval.analysis.significance import CORRECTIONS, TESTS, Comparison, compare, correct
from rankeval.comparison.result import Cell, CompareResult, RunResult, WorseVerdict
from rankeval.engines.finish import evaluate_inputs
from rankeval.errors import OptionError
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.load import Truth, load_predictions, open_input
from rankeval.io.roles import swapped
from rankeval.names import from_name, is_corpus
from rankeval.notices import Notice
from rankeval.registry import GEOMETRIC, REGISTRY
from rankeval.results.evaluation import Evaluation


def compare_runs(
    truth: Truth,
    runs: list[tuple[str, str]],
    settings,
    *,
    baseline: str | Sequence[str] | None = None,
    test: str = "t",
    rounds: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    ci_level: float = 0.95,
    top_changes: int = 0,
    preds_format: str | None = None,
    columns: dict[str, str | None] | None = None,
    truth_table=None,
    reading: dict[str, Any] | None = None,
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
) -> CompareResult:
    """Evaluate every (name, path) run against ``truth`` and test each against the baseline,
    or against each of several (``baseline``: a run name or a list of them; default the
    first run), corrected over every test of a metric; ``margins``
    (``analysis.equivalence.Margin``): non-inferiority and equivalence gates; ``all_pairs``:
    also every pair of runs, by the randomised Tukey HSD test (``"tukey"``) or the paired test
    corrected over all pairs (a correction's name); ``fail_if_worse``: a gate per run and
    baseline that fails when the run is significantly worse on a metric."""
    _check_options(test, correction, alpha, ci_level, rounds)
    names = [n for n, _ in runs]
    bases = _baselines(baseline, names)
    results, loaded = _evaluated(runs, truth, settings, preds_format, columns or {},
                                 truth_table, reading, extras, keep=rbo is not None)
    per_user = [m for m in settings.metrics if not is_corpus(m)]
    shared, values, notices = _paired(results, per_user)
    cells, left_out = _tested(results, bases, values, len(shared), test, rounds, seed,
                              ci_level, alpha, correction)
    if min_effect:
        cells = [_sized(c, min_effect) for c in cells]
    result = CompareResult(
        settings, results, bases, shared, values, cells,
        {"test": test, "alpha": alpha, "correction": correction, "rounds": rounds,
         "seed": seed, "ci_level": ci_level, "truth": truth.source.path},
        notices + left_out,
    )
    _decide(result, all_pairs, margins, fail_if_worse)
    from rankeval.comparison.changes import by_segment, intervals_of

    if top_changes:
        result.top = most_changed(result.values, result.shared_users, result.baseline,
                                  result.candidates, result.metrics, top_changes)
    if rbo is not None:
        from rankeval.analysis.overlap import overlap

        result.overlaps = [overlap(loaded[name], loaded[base], settings, (name, base), rbo,
                                   shared) for base in bases for name in result.candidates]
    if intervals:
        result.intervals = intervals_of(result)
    if segments is not None:
        from rankeval.analysis.segments import with_bins

        result.segments = by_segment(result, segments, with_bins(segment_by, segment_bins),
                                     reading)
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
        preds = load_predictions(
            table, cols.get("user_col"), cols.get("item_col"), cols.get("rank_col"),
            cols.get("score_col"), cols.get("sample_col"),
        )
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


def _tested(results: list[RunResult], bases: list[str], values, shared: int, test: str,
            rounds: int, seed: int, level: float, alpha: float,
            correction: str) -> tuple[list[Cell], list[Notice]]:
    """Every run against every baseline on every metric: the paired test over the users both
    score (a corpus metric: the difference of the two values, no test), corrected over the
    tests of each metric. A baseline whose value is undefined leaves its tests out of the
    family, with a notice."""
    by_name = {r.name: r.evaluation for r in results}
    others = [r.name for r in results if r.name not in bases]
    cells: list[Cell] = []
    notices: list[Notice] = []
    for metric in by_name[bases[0]].settings.metrics:
        stats = []
        for base in bases:
            for name in others:
                if is_corpus(metric):  # one value per run: its difference, without a test
                    s = _corpus_comparison(by_name[base], by_name[name], metric, shared)
                else:
                    s = _on_scale(metric, compare(
                        *_both_scored(values[base][metric], values[name][metric]), test,
                        rounds, seed, level))
                stats.append((name, base, s))
        adjusted = correct([s.p_value for _, _, s in stats], correction)
        cells += [Cell(name, metric, s, p, bool(p < alpha) if math.isfinite(p) else None,
                       baseline=base)
                  for (name, base, s), p in zip(stats, adjusted, strict=True)]
        if not is_corpus(metric) and len(bases) > 1:  # one baseline: the footer says it
            family = sum(math.isfinite(p) for p in adjusted)
            notices += [Notice("baseline_undefined", len(others),
                               {"metric": metric, "baseline": base, "family": family,
                                "why": by_name[base].undefined[metric]})
                        for base in bases if metric in by_name[base].undefined]
    return cells, notices


def _decide(result: CompareResult, all_pairs: str | None, margins: Any,
            fail_if_worse: bool) -> None:
    """What the comparison decides beyond the baseline's tests: the large-sample notice,
    every pair of runs (``all_pairs``), the gates (non-inferiority, equivalence, worse)."""
    from rankeval.analysis.power import large_sample_notices

    o = result.options
    names = [r.name for r in result.runs]
    result.notices += large_sample_notices(result)
    if all_pairs is not None:
        from rankeval.analysis.allpairs import TUKEY
        from rankeval.analysis.allpairs import all_pairs as every_pair

        if all_pairs not in (TUKEY, *CORRECTIONS):
            raise OptionError(f"all_pairs must be {TUKEY} or a correction "
                              f"({', '.join(CORRECTIONS)})")
        result.pairs = [every_pair(m, names, [result.values[n][m] for n in names], all_pairs,
                                   o["alpha"], o["test"], o["rounds"], o["seed"],
                                   o["ci_level"])
                        for m in result.metrics if not is_corpus(m)]
    if margins:
        from rankeval.analysis.equivalence import judge

        result.gates = [judge(m, n, result.values[base][m.metric], result.values[n][m.metric],
                              o["alpha"], base) for m in margins for base in result.baselines
                        for n in result.candidates]
    if fail_if_worse:
        worse = result.worse
        result.gates += [
            WorseVerdict(n, base, tuple(c for c in worse if c.run == n and c.baseline == base),
                         sum(c.run == n and c.baseline == base and c.tested
                             for c in result.cells))
            for base in result.baselines for n in result.candidates if n != base]


def _sized(cell: Cell, min_effect: dict[str, Any]) -> Cell:
    """The cell marked small when significant but below the minimum effect that matters
    (``min_effect``: metric, or ``"*"`` for every metric, -> analysis.power.Effect)."""
    effect = min_effect.get(cell.metric, min_effect.get("*"))
    if effect is None or not cell.tested or not cell.defined:
        return cell
    wanted = effect.absolute(cell.stats.mean_a)
    return dataclasses.replace(cell, small=bool(cell.significant) and
                               abs(cell.stats.delta) < wanted)


def _check_options(test: str, correction: str, alpha: float, ci_level: float,
                   rounds: int) -> None:
    if test not in TESTS:
        raise OptionError(f"{{option}} must be one of {', '.join(TESTS)}", "test")
    if correction not in CORRECTIONS:
        raise OptionError(f"{{option}} must be one of {', '.join(CORRECTIONS)}", "correction")
    if not 0 < alpha < 1 or not 0 < ci_level < 1:
        raise OptionError("{opt:alpha} and {opt:confidence} must lie strictly between 0 and 1")
    if rounds < 100:
        raise OptionError("{option} must be at least 100", "rounds")


def _both_scored(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The users both runs scored (a metric such as ild leaves some users without a value)."""
    both = ~(np.isnan(a) | np.isnan(b))
    return (a, b) if both.all() else (a[both], b[both])


def _corpus_comparison(a: Evaluation, b: Evaluation, metric: str, n: int) -> Comparison:
    """A corpus-level metric has no per-user values to pair: the difference of the two
    values, with no test, interval or wins."""
    x, y = a.metrics[metric], b.metrics[metric]
    nan = math.nan
    return Comparison(n=n, mean_a=x, mean_b=y, delta=y - x, p_value=nan, effect_size=nan,
                      ci_low=nan, ci_high=nan, wins=0, ties=0, losses=0)


def _on_scale(metric: str, c: Comparison) -> Comparison:
    """The comparison of a geometric mean (gm_map), whose per-user values are logs: the tests
    and the effect size stay on the logs; means, delta and interval come back to the metric's
    scale (the interval of the mean log ratio d maps to gm_a (e^d - 1))."""
    if REGISTRY[from_name(metric).name].overall != GEOMETRIC or not c.n:
        return c
    a, b = math.exp(c.mean_a), math.exp(c.mean_b)
    return dataclasses.replace(c, mean_a=a, mean_b=b, delta=b - a,
                               ci_low=a * math.expm1(c.ci_low), ci_high=a * math.expm1(c.ci_high))


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
