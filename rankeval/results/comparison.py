"""The outcome of ``compare``: each run's evaluation (``RunResult``), and every test of a run
against a baseline (``analysis.baselines.Cell``), with the views reports read (means,
undefined metrics, the worse runs). Shown through ``report.views``, as an evaluation is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.analysis.baselines import Cell, WorseVerdict
from rankeval.analysis.gates import lower_better
from rankeval.analysis.overlap import KINDS
from rankeval.errors import plural
from rankeval.io.arrow import nan_as_null
from rankeval.kernels.aggregate import exact_parts, overall
from rankeval.names import from_name, is_corpus
from rankeval.notices import RUN, Notice
from rankeval.report import views
from rankeval.results.evaluation import Evaluation
from rankeval.settings import Settings

__all__ = ["Cell", "CompareResult", "RunResult", "WorseVerdict"]


@dataclass
class RunResult:
    name: str
    path: str
    evaluation: Evaluation
    dropped: int = 0  # evaluated users left out because another run does not have them


@dataclass
class CompareResult:
    settings: Settings
    runs: list[RunResult]
    baselines: list[str]  # every run not among them is tested against each
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
    # non-inferiority and equivalence gates (analysis.equivalence.Verdict), per run and
    # baseline; then fail_if_worse's (WorseVerdict)
    gates: list[Any] = field(default_factory=list)
    # every pair of runs, per per-user metric (analysis.allpairs.Pairs; ``all_pairs``)
    pairs: list[Any] = field(default_factory=list)
    # rank-biased overlap of each run with each baseline (analysis.overlap.Overlap; ``rbo``)
    overlaps: list[Any] = field(default_factory=list)
    # --gold: each difference estimated by PPI++ under a human-judged sample
    # (results.gold.GoldComparison)
    gold: Any = None

    @property
    def passed(self) -> bool:
        """Whether every gate passed (True when there are none)."""
        return all(g.passed for g in self.gates)

    @property
    def metrics(self) -> list[str]:
        return list(self.settings.metrics)

    @property
    def baseline(self) -> str:
        """The first baseline (``top`` lists the users changed against it)."""
        return self.baselines[0]

    @property
    def candidates(self) -> list[str]:
        """The runs tested against the baselines."""
        return [r.name for r in self.runs if r.name not in self.baselines]

    @property
    def shared_notices(self) -> list[Notice]:
        """The notices about an input every run shares (the truth: ``Notice.subject``),
        each once, though every run's evaluation holds them."""
        return list(dict.fromkeys(n for r in self.runs for n in r.evaluation.notices
                                  if n.subject != RUN))

    def run_notices(self, run: str) -> list[Notice]:
        """The notices of ``run``'s own (its lists, alone or against the truth)."""
        return list(dict.fromkeys(n for r in self.runs if r.name == run
                                  for n in r.evaluation.notices if n.subject == RUN))

    def said(self) -> list[tuple[str, Notice]]:
        """Every warning of the comparison, each once, after what it is about: a notice
        about an input every run shares once, after the input's name; a run's own after the
        run's name; the comparison's own (``notices``) bare. As stderr, HTML and Markdown
        show them."""
        return [*((f"{n.params['path']}: ", n) for n in self.shared_notices),
                *((f"{r.name}: ", n) for r in self.runs for n in self.run_notices(r.name)),
                *(("", n) for n in dict.fromkeys(self.notices))]

    def label(self, cell: Cell) -> str:
        """The run of a cell, and its baseline when there are several: ``pr vs main``."""
        return cell.run if len(self.baselines) == 1 else f"{cell.run} vs {cell.baseline}"

    def mean(self, run: str, metric: str) -> float:
        """The overall value over the shared users (a mean, a sum or a geometric mean; a
        corpus-level metric's value for the run)."""
        if is_corpus(metric):
            return next(r.evaluation.metrics[metric] for r in self.runs if r.name == run)
        v = self.values[run][metric]
        v = v[~np.isnan(v)]  # users the metric leaves without a value (ild); none: undefined
        return overall(from_name(metric), exact_parts(v), len(v))

    @property
    def undefined(self) -> dict[str, str]:
        """Metrics with no comparison (SPEC section 9) -> why: undefined in a run, or no
        user has a value in both runs. Left out of the tests and the correction."""
        out: dict[str, list[str]] = {}
        for c in self.cells:
            if c.defined:
                continue
            run = next((r for r in self.runs if r.name in (c.baseline, c.run)
                        and c.metric in r.evaluation.undefined), None)
            why = (f"{run.name}: {run.evaluation.undefined[c.metric]}" if run else
                   f"{c.metric} is undefined: no user compared has a value in both "
                   f"{c.run} and {c.baseline}")
            if why not in out.setdefault(c.metric, []):
                out[c.metric].append(why)
        return {metric: "; ".join(whys) for metric, whys in out.items()}

    def cell(self, run: str, metric: str, baseline: str | None = None) -> Cell | None:
        """``run`` against ``baseline`` (default: the first) on ``metric``; None for a
        baseline itself."""
        base = self.baseline if baseline is None else baseline
        return next((c for c in self.cells
                     if c.run == run and c.metric == metric and c.baseline == base), None)

    @property
    def worse(self) -> list[Cell]:
        """Significant differences where a run is worse than a baseline: below it, or above
        it on a metric where lower is better (and, with ``min_effect``, by at least that
        much)."""
        return [c for c in self.cells if c.significant and not c.small
                and (c.stats.delta > 0 if lower_better(c.metric) else c.stats.delta < 0)]

    def per_user_table(self):
        """The users compared, with every run's value of every metric (``RUN/METRIC``)."""
        columns = {"user_id": pa.array(self.shared_users.tolist(), pa.string())}
        for run, metrics in self.values.items():
            columns.update({f"{run}/{m}": nan_as_null(v) for m, v in metrics.items()})
        for o in self.overlaps:
            columns.update({f"{o.run}/rbo_{k}[vs {o.baseline}]": nan_as_null(o.values[k])
                            for k in KINDS})
        return pa.table(columns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (keys are stable: CI scripts read them)."""
        return views.compare_document(self)

    def __repr__(self) -> str:
        return (f"<CompareResult of {plural(len(self.runs), 'run')}, "
                f"{plural(len(self.shared_users), 'user')} "
                f"compared>\n{views.compare_text(self)}")

    def _repr_html_(self) -> str:
        return views.compare_notebook(self)
