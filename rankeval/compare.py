"""``rankeval compare``: several runs against one truth, with paired tests per metric."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .aggregate import exact_parts
from .arrow import from_numpy, to_numpy
from .errors import OptionError, plural
from .evaluation import Evaluation, evaluate_inputs, overall
from .load import Truth, load_predictions, open_input, swapped
from .names import from_name
from .notices import Notice
from .registry import CORPUS, GEOMETRIC, REGISTRY
from .stats import CORRECTIONS, TESTS, Comparison, compare, correct


@dataclass
class RunResult:
    name: str
    path: str
    evaluation: Evaluation
    dropped: int = 0  # evaluated users left out because another run does not have them


@dataclass
class Cell:
    run: str
    metric: str
    stats: Comparison
    p_adjusted: float
    significant: bool | None  # None: the test is undefined here (never "not significant")
    # significant, but |delta| below --min-effect (what matters); None: no minimum given
    small: bool | None = None

    @property
    def tested(self) -> bool:
        """Whether the metric has per-user values to test (a corpus metric has one value per
        run: a difference, no test)."""
        return not _is_corpus(self.metric)

    @property
    def defined(self) -> bool:
        """Whether the comparison has a value: some user has one in both runs (per-user
        metrics), or both runs have one (corpus metrics)."""
        return math.isfinite(self.stats.delta) and (bool(self.stats.n) or not self.tested)

    def to_dict(self) -> dict[str, Any]:
        s = self.stats
        return {
            "run": self.run,
            "metric": self.metric,
            "mean": _finite_or_none(s.mean_b),
            "baseline_mean": _finite_or_none(s.mean_a),
            "delta": _finite_or_none(s.delta),
            "tested": self.tested,
            "users": s.n if self.tested else None,
            "p_value": _finite_or_none(s.p_value),
            "p_adjusted": _finite_or_none(self.p_adjusted),
            "significant": self.significant,
            "below_min_effect": self.small,
            "effect_size": _finite_or_none(s.effect_size),
            "ci": [_finite_or_none(s.ci_low), _finite_or_none(s.ci_high)],
            "wins": s.wins,
            "ties": s.ties,
            "losses": s.losses,
        }


@dataclass
class CompareResult:
    settings: Any  # settings.Settings
    runs: list[RunResult]
    baseline: str
    shared_users: np.ndarray
    values: dict[str, dict[str, np.ndarray]]  # run -> metric -> values over shared users
    cells: list[Cell]
    options: dict[str, Any]
    notices: list[Notice] = field(default_factory=list)
    top: dict[str, dict[str, dict[str, list[dict]]]] = field(default_factory=dict)
    # segment column -> [{"value", "users", "cells": [Cell]}], tests corrected across the
    # runs and segments of each metric
    segments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # run -> metric -> bootstrap interval of its mean over the shared users (``--ci``)
    intervals: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    # non-inferiority and equivalence gates (analysis.equivalence.Verdict), per run
    gates: list[Any] = field(default_factory=list)
    # every pair of runs, per per-user metric (analysis.allpairs.Pairs; ``all_pairs``)
    pairs: list[Any] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every margin gate passed (True when there are none)."""
        return all(g.passed for g in self.gates)

    @property
    def metrics(self) -> list[str]:
        return list(self.settings.metrics)

    def mean(self, run: str, metric: str) -> float:
        """The overall value over the shared users (a mean, a sum or a geometric mean; a
        corpus-level metric's value for the run)."""
        if _is_corpus(metric):
            return next(r.evaluation.metrics[metric] for r in self.runs if r.name == run)
        v = self.values[run][metric]
        v = v[~np.isnan(v)]  # users the metric leaves without a value (ild); none: undefined
        return overall(from_name(metric), exact_parts(v), len(v))

    @property
    def undefined(self) -> dict[str, str]:
        """Metrics with no comparison (SPEC section 9) -> why: undefined in a run, or no
        user has a value in both runs. Left out of the tests and the correction."""
        out: dict[str, str] = {}
        for c in self.cells:
            if c.defined or c.metric in out:
                continue
            run = next((r for r in self.runs if c.metric in r.evaluation.undefined), None)
            out[c.metric] = (f"{run.name}: {run.evaluation.undefined[c.metric]}" if run else
                             f"{c.metric} is undefined: no user compared has a value in both "
                             "runs")
        return out

    def cell(self, run: str, metric: str) -> Cell | None:
        return next((c for c in self.cells if c.run == run and c.metric == metric), None)

    @property
    def worse(self) -> list[Cell]:
        """Significant differences where a run is below the baseline (and, with
        ``min_effect``, by at least that much)."""
        return [c for c in self.cells if c.significant and not c.small and c.stats.delta < 0]

    def per_user_table(self):
        """The users compared, with every run's value of every metric (``RUN/METRIC``)."""
        import pyarrow as pa

        from .arrow import nan_as_null

        columns = {"user_id": pa.array(self.shared_users.tolist(), pa.string())}
        for run, metrics in self.values.items():
            columns.update({f"{run}/{m}": nan_as_null(v) for m, v in metrics.items()})
        return pa.table(columns)

    def to_dict(self) -> dict[str, Any]:
        from .report.json import compare_document

        return compare_document(self)


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def run_names(paths: list[str], names: list[str]) -> list[str]:
    """``--name`` values, else file stems made unique."""
    if names and len(names) != len(paths):
        given = plural(len(names), "time")
        raise OptionError(f"{{option}} was given {given} for {len(paths)} runs", "name")
    chosen = list(names) or [Path(p).name.split(".")[0] if p != "-" else "stdin" for p in paths]
    seen: dict[str, int] = {}
    unique = []
    for name in chosen:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}-{seen[name]}")
    if len(set(unique)) != len(unique):
        raise OptionError("run names must differ: give each run its own {option}", "name")
    return unique


def compare_runs(
    truth: Truth,
    runs: list[tuple[str, str]],
    settings,
    *,
    baseline: str | None = None,
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
) -> CompareResult:
    """Evaluate every (name, path) run against ``truth`` and test each against the baseline;
    ``margins`` (``analysis.equivalence.Margin``): non-inferiority and equivalence gates;
    ``all_pairs``: also every pair of runs, by the randomised Tukey HSD test (``"tukey"``) or
    the paired test corrected over all pairs (a correction's name)."""
    _check_options(test, correction, alpha, ci_level, rounds)
    names = [n for n, _ in runs]
    base = baseline if baseline is not None else names[0]
    if base not in names:
        raise OptionError(f"{{option}} {base!r} is not a run name ({', '.join(names)})",
                          "baseline_run")
    cols = columns or {}
    results = []
    for name, path in runs:
        table = open_input(path, "predictions", preds_format, reading)
        if truth_table is not None:
            swapped(table, truth_table)
        preds = load_predictions(
            table, cols.get("user_col"), cols.get("item_col"), cols.get("rank_col"),
            cols.get("score_col"),
        )
        results.append(RunResult(name, path, evaluate_inputs(preds, truth, settings, extras)))
    per_user = [m for m in settings.metrics if not _is_corpus(m)]
    shared, values, notices = _paired(results, per_user)
    cells = _tested(results, base, values, len(shared), test, rounds, seed, ci_level, alpha,
                    correction)
    if min_effect:
        cells = [_sized(c, min_effect) for c in cells]
    result = CompareResult(
        settings, results, base, shared, values, cells,
        {"test": test, "alpha": alpha, "correction": correction, "rounds": rounds,
         "seed": seed, "ci_level": ci_level, "truth": truth.source.path},
        notices,
    )
    _decide(result, all_pairs, margins)
    if top_changes:
        result.top = most_changed(result, top_changes)
    if intervals:
        result.intervals = _intervals(result)
    if segments is not None:
        from .segments import with_bins

        result.segments = _by_segment(result, segments, with_bins(segment_by, segment_bins),
                                      reading)
    return result


def _tested(results: list[RunResult], base: str, values, shared: int, test: str, rounds: int,
            seed: int, level: float, alpha: float, correction: str) -> list[Cell]:
    """Every run against the baseline on every metric: the paired test over the users both
    score (a corpus metric: the difference of the two values, no test), corrected over the
    runs of each metric."""
    by_name = {r.name: r.evaluation for r in results}
    others = [r.name for r in results if r.name != base]
    cells: list[Cell] = []
    for metric in by_name[base].settings.metrics:
        if _is_corpus(metric):  # one value per run: its difference, without a test
            stats = [(name, _corpus_comparison(by_name[base], by_name[name], metric, shared))
                     for name in others]
        else:
            stats = [(name, _on_scale(metric, compare(
                *_both_scored(values[base][metric], values[name][metric]), test, rounds, seed,
                level))) for name in others]
        adjusted = correct([s.p_value for _, s in stats], correction)
        cells += [Cell(name, metric, s, p, bool(p < alpha) if math.isfinite(p) else None)
                  for (name, s), p in zip(stats, adjusted, strict=True)]
    return cells


def _decide(result: CompareResult, all_pairs: str | None, margins: Any) -> None:
    """What the comparison decides beyond the baseline's tests: the large-sample notice,
    every pair of runs (``all_pairs``), the non-inferiority and equivalence gates."""
    from .analysis.power import large_sample_notices

    o, base = result.options, result.baseline
    names = [r.name for r in result.runs]
    result.notices += large_sample_notices(result)
    if all_pairs is not None:
        from .analysis.allpairs import TUKEY
        from .analysis.allpairs import all_pairs as every_pair

        if all_pairs not in (TUKEY, *CORRECTIONS):
            raise OptionError(f"all_pairs must be {TUKEY} or a correction "
                              f"({', '.join(CORRECTIONS)})")
        result.pairs = [every_pair(m, names, [result.values[n][m] for n in names], all_pairs,
                                   o["alpha"], o["test"], o["rounds"], o["seed"],
                                   o["ci_level"])
                        for m in result.metrics if not _is_corpus(m)]
    if margins:
        from .analysis.equivalence import judge

        result.gates = [judge(m, n, result.values[base][m.metric], result.values[n][m.metric],
                              o["alpha"]) for m in margins for n in names if n != base]


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


def _intervals(result: CompareResult) -> dict[str, dict[str, tuple[float, float]]]:
    """Per run and per-user metric, the bootstrap interval of its mean over the users
    compared (the same users for every run, so that the bands of a K curve are comparable)."""
    from .stats import bootstrap_mean_ci

    o = result.options
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for run, metrics in result.values.items():
        out[run] = {}
        for metric, v in metrics.items():
            low, high = bootstrap_mean_ci(v[~np.isnan(v)], o["rounds"], o["seed"], o["ci_level"])
            if REGISTRY[from_name(metric).name].overall == GEOMETRIC:  # a mean of logs
                low, high = math.exp(low), math.exp(high)
            out[run][metric] = (low, high)
    return out


def _by_segment(result: CompareResult, table_or_path, by, reading) -> dict:
    """Every per-user metric compared within each segment value; p-values corrected over
    all (run, segment) tests of one metric and segment column."""
    from .load import open_input
    from .segments import ordered_values, user_labels

    table = open_input(table_or_path, "segments", None, reading)
    shared = pa.array(result.shared_users.tolist(), pa.string())
    opts = result.options
    out = {}
    for word, (labels, rank) in user_labels(shared, table, by).items():
        rows: list[dict[str, Any]] = [
            {"value": v, "users": int(np.count_nonzero(labels == v)), "cells": []}
            for v in ordered_values(labels, rank)]
        for metric in result.metrics:
            if _is_corpus(metric):
                continue
            tests = []
            for row in rows:
                members = labels == row["value"]
                a = result.values[result.baseline][metric][members]
                for r in result.runs:
                    if r.name == result.baseline:
                        continue
                    b = result.values[r.name][metric][members]
                    stats = _on_scale(metric, compare(*_both_scored(a, b), opts["test"],
                                                      opts["rounds"], opts["seed"],
                                                      opts["ci_level"]))
                    tests.append((row, r.name, stats))
            adjusted = correct([t[2].p_value for t in tests], opts["correction"])
            for (row, run, stats), p in zip(tests, adjusted, strict=True):
                row["cells"].append(Cell(run, metric, stats, p, bool(p < opts["alpha"])
                                         if math.isfinite(p) else None))
        out[word] = rows
    return out


def _both_scored(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The users both runs scored (a metric such as ild leaves some users without a value)."""
    both = ~(np.isnan(a) | np.isnan(b))
    return (a, b) if both.all() else (a[both], b[both])


def _is_corpus(metric: str) -> bool:
    return REGISTRY[from_name(metric).name].scope == CORPUS


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


def most_changed(result: CompareResult, n: int, metrics=None) -> dict:
    """Per run and metric (of ``metrics``, default all), the users most helped and most hurt
    against the baseline."""
    users = result.shared_users
    out: dict = {}
    for r in result.runs:
        if r.name == result.baseline:
            continue
        out[r.name] = {}
        for metric in result.metrics if metrics is None else metrics:
            if _is_corpus(metric):  # no users to list
                continue
            a, b = result.values[result.baseline][metric], result.values[r.name][metric]
            diff = b - a
            order = np.argsort(diff, kind="stable")
            hurt = [i for i in order[:n] if diff[i] < 0]
            helped = [i for i in order[::-1][:n] if diff[i] > 0]
            out[r.name][metric] = {
                label: [
                    {"user": str(users[i]), "baseline": float(a[i]), "run": float(b[i])}
                    for i in idx
                ]
                for label, idx in (("helped", helped), ("hurt", hurt))
            }
    return out
