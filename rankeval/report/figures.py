"""The charts of the HTML report, from an evaluation or a comparison: what to draw (which
metrics, which bins) and the aggregation that keeps a chart small whatever the user count.

A score report is drawn as a comparison of one run, so every chart is written once:
``View`` gives both the same shape (runs, means, intervals, per-user values, exposure).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankeval.errors import plural
from rankeval.names import MetricSpec, from_name
from rankeval.registry import CORPUS, GEOMETRIC, REGISTRY
from rankeval.report import charts
from rankeval.report.comparison import correction_words
from rankeval.report.numbers import fixed

MAX_BARS = 30  # segment values drawn per chart; the table beside it has every one


@dataclass(frozen=True)
class View:
    runs: list[str]
    specs: list[MetricSpec]  # per-user and corpus metrics, in the order asked
    _means: dict[str, dict[str, float]]
    _intervals: dict[str, dict[str, tuple[float, float]]]
    _values: Any  # (run, metric) -> per-user values
    _exposure: dict[str, Any]

    @classmethod
    def of_evaluation(cls, ev, name: str) -> View:
        return cls([name], ev.specs, {name: ev.metrics}, {name: ev.intervals},
                   lambda run, m: ev.values(m), {name: ev.exposure})

    @classmethod
    def of_comparison(cls, result) -> View:
        runs = [r.name for r in result.runs]
        return cls(runs, list(result.settings.specs),
                   {r: {m: result.mean(r, m) for m in result.metrics} for r in runs},
                   result.intervals, lambda run, m: result.values[run][m],
                   {r.name: r.evaluation.exposure for r in result.runs})

    def mean(self, run: str, metric: str) -> float:
        return self._means[run][metric]

    def interval(self, run: str, metric: str) -> tuple[float, float] | None:
        return self._intervals.get(run, {}).get(metric)

    def exposure(self, run: str):
        """The run's popularity-bias summary (``exposure.Exposure``), or None."""
        return self._exposure.get(run)

    def values(self, run: str, metric: str) -> np.ndarray:
        v = self._values(run, metric)
        return v[~np.isnan(v)]

    @property
    def per_user(self) -> list[MetricSpec]:
        return [s for s in self.specs if REGISTRY[s.name].scope != CORPUS]


def slug(text: str) -> str:
    """An element id from a metric name: ``ndcg@10`` -> ``ndcg-10``."""
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def headline(specs: list[MetricSpec]) -> list[MetricSpec]:
    """One cut-off per metric for the charts that cannot show every K: 10 when asked, else
    the deepest; a metric without cut-offs as it is."""
    rows: dict[str, list[MetricSpec]] = {}
    for s in specs:
        rows.setdefault(s.row, []).append(s)
    out = []
    for group in rows.values():
        ten = [s for s in group if s.k == 10]
        finite = sorted((s for s in group if s.k is not None), key=lambda s: s.k or 0)
        out.append(ten[0] if ten else finite[-1] if finite else group[0])
    return out


def curves(view: View) -> list[tuple[str, str, str]]:
    """(id, caption, svg) per metric asked at two or more Ks, and the interpolated
    precision-recall curve when iprec has two or more levels."""
    rows: dict[str, list[MetricSpec]] = {}
    for s in view.per_user:
        if s.k is not None and s.level is None:
            rows.setdefault(s.name, []).append(s)
    out = []
    for name, specs in rows.items():
        if len(specs) < 2:
            continue
        specs.sort(key=lambda s: s.k or 0)  # every spec here has a K
        series = [_series(view, run, specs, [s.k for s in specs]) for run in view.runs]
        cid = f"chart-curve-{slug(name)}"
        caption = (f"{name}@K for K = {specs[0].k}..{specs[-1].k}" + _band_note(view, specs)
                   + _undefined_note(view, specs))
        out.append((cid, caption, charts.curves(cid, f"{name}@K", series, name)))
    levels = [s for s in view.per_user if s.name == "iprec" and s.level is not None]
    if len(levels) >= 2:
        levels.sort(key=lambda s: s.level or 0.0)  # every spec here has a level
        series = [_series(view, run, levels, [s.level for s in levels]) for run in view.runs]
        svg = charts.curves("chart-curve-iprec", "interpolated precision at recall levels",
                            series, "iprec")
        svg = svg.replace("K (cut-off)", "recall level")
        out.append(("chart-curve-iprec", "interpolated precision-recall curve"
                    + _band_note(view, levels), svg))
    return out


def _series(view: View, run: str, specs: list[MetricSpec], x: list) -> dict:
    means = [view.mean(run, str(s)) for s in specs]
    found = [view.interval(run, str(s)) for s in specs]
    bands = [b for b in found if b is not None]
    have = len(bands) == len(found)
    return {"label": run, "k": x, "mean": means,
            "low": [b[0] for b in bands] if have else None,
            "high": [b[1] for b in bands] if have else None}


def _undefined_note(view: View, specs: list[MetricSpec]) -> str:
    """Which points are not drawn because the mean is undefined (SPEC section 9)."""
    missing = [f"{s}" + (f" ({run})" if len(view.runs) > 1 else "") for run in view.runs
               for s in specs if not math.isfinite(view.mean(run, str(s)))]
    return f"; undefined, so not drawn: {', '.join(missing)}" if missing else ""


def _band_note(view: View, specs: list[MetricSpec]) -> str:
    band = view.interval(view.runs[0], str(specs[0]))
    return "; bands: bootstrap confidence intervals of the means" if band is not None else ""


def bins(values: list[np.ndarray], symmetric: bool = False) -> np.ndarray:
    """Bin edges shared by every series: 20 bins over [0, 1] for a metric in that range,
    else up to 40 bins over the data (centred on 0 for differences)."""
    finite = [v for v in values if len(v)]
    if not finite:
        return np.linspace(0, 1, 21)
    low = min(float(v.min()) for v in finite)
    high = max(float(v.max()) for v in finite)
    if symmetric:
        m = max(abs(low), abs(high)) or 1.0
        return np.linspace(-m, m, 41)
    if low >= 0 and high <= 1:
        return np.linspace(0, 1, 21)
    if high == low:
        return np.linspace(low - 0.5, high + 0.5, 2)
    if all(float(x).is_integer() for v in finite for x in (v.min(), v.max())) \
            and high - low <= 40:  # counts: one bin per value
        return np.arange(low - 0.5, high + 1.5)
    return np.linspace(low, high, 41)


def distributions(view: View) -> list[tuple[str, str, str]]:
    """Per metric at its headline K: the share of users per value bin, one series per run,
    the share at 0 said (the mass a histogram bar hides) and the means marked."""
    out = []
    for spec in _arithmetic(headline(view.per_user)):
        metric = str(spec)
        values = [view.values(run, metric) for run in view.runs]
        if not any(len(v) for v in values):  # undefined: no user has a value to draw
            continue
        edges = bins(values)
        counts = [np.histogram(v, edges)[0] for v in values]
        zeros = [float(np.mean(v == 0)) if len(v) else 0.0 for v in values]
        note = "at 0: " + ", ".join(f"{z:.1%}" if len(view.runs) == 1 else f"{r} {z:.1%}"
                                   for r, z in zip(view.runs, zeros, strict=True))
        marks = [(float(v.mean()), "mean" if len(view.runs) == 1 else "")
                 for v in values if len(v)]
        cid = f"chart-dist-{slug(metric)}"
        svg = charts.histogram(cid, metric, edges, counts, view.runs, metric, marks, note)
        users = ", ".join(f"{len(v):,}" for v in values)
        means = ", ".join(f"{r} {fixed(v.mean())}" for r, v in zip(view.runs, values, strict=True)
                          if len(v))
        out.append((cid, f"{metric} over users (users: {users}); {note}; dashed: the mean"
                    + ("" if len(view.runs) == 1 else f"s ({means})"), svg))
    return out


def differences(result) -> list[tuple[str, str, str]]:
    """Per metric at its headline K: the histogram of paired per-user differences (run -
    baseline), one series per run (and baseline, when there are several)."""
    view = View.of_comparison(result)
    several = len(result.baselines) > 1
    pairs = [(run, base) for base in result.baselines for run in result.candidates]
    series = [f"{run} vs {base}" if several else run for run, base in pairs]
    against = " and ".join(result.baselines)
    out = []
    for spec in _arithmetic(headline(view.per_user)):
        metric = str(spec)
        diffs = []
        for run, base in pairs:
            d = result.values[run][metric] - result.values[base][metric]
            diffs.append(d[~np.isnan(d)])
        if not any(len(d) for d in diffs):  # no user has a value in both runs
            continue
        edges = bins(diffs, symmetric=True)
        counts = [np.histogram(d, edges)[0] for d in diffs]
        cid = f"chart-diff-{slug(metric)}"
        svg = charts.histogram(cid, f"{metric}: run - {'baseline' if several else against}, "
                               "per user", edges, counts, series, "paired difference",
                               [(0.0, "no change")])
        out.append((cid, f"paired per-user differences of {metric} against {against}", svg))
    return out


def forest(result) -> list[tuple[str, str, str]]:
    """Per metric: every K's (and run's) difference from the baseline with its interval."""
    rows: dict[str, list] = {}
    for c in result.cells:
        if c.tested and c.defined:  # an undefined difference has no point to draw
            rows.setdefault(from_name(c.metric).row, []).append(c)
    several = len(result.runs) > 2
    out = []
    for name, cells in rows.items():
        labels = [f"{c.metric} {result.label(c)}" if several else c.metric for c in cells]
        cid = f"chart-forest-{slug(name)}"
        svg = charts.forest(cid, f"{name}: difference from {_against(result)}", labels,
                            [c.stats.delta for c in cells], [c.stats.ci_low for c in cells],
                            [c.stats.ci_high for c in cells], [c.significant for c in cells])
        level = f"{result.options['ci_level']:.0%}"
        out.append((cid, f"{name}: run - baseline with {level} intervals; coloured where "
                    f"significant after the correction ({correction_words(result.options)})",
                    svg))
    return out


def win_tie_loss(result) -> tuple[str, str, str] | None:
    cells = [c for c in result.cells
             if c.tested and c.defined and from_name(c.metric) in
             headline(list(result.settings.specs))]
    if not cells:
        return None
    several = len(result.runs) > 2
    labels = [f"{c.metric} {result.label(c)}" if several else c.metric for c in cells]
    cid = "chart-win-tie-loss"
    svg = charts.win_tie_loss(cid, f"users better, equal, worse than {_against(result)}",
                              labels, [c.stats.wins for c in cells],
                              [c.stats.ties for c in cells], [c.stats.losses for c in cells])
    return cid, "per user: the run above (win), equal to (tie) or below (loss) the baseline", svg


def _against(result) -> str:
    """The baseline, or ``the baselines`` (each label names its own)."""
    return result.baseline if len(result.baselines) == 1 else "the baselines"


def segment_bars(column: str, labels: list[str], users: list[int], metric: str,
                 values: list[list[float]], series: list[str]) -> tuple[str, str, str]:
    """Bars of one metric per segment value (the largest MAX_BARS segments)."""
    shown = sorted(range(len(labels)), key=lambda i: -users[i])[:MAX_BARS]
    shown.sort()
    cid = f"chart-seg-{slug(column)}-{slug(metric)}"
    svg = charts.hbars(cid, f"{metric} by {column}", [labels[i] for i in shown],
                       [values[i] for i in shown], series, metric,
                       [f"{plural(users[i], 'user')}" for i in shown])
    caption = f"{metric} by {html.escape(column)}"
    if len(shown) < len(labels):
        caption += (f" (the {len(shown)} largest of {plural(len(labels), 'segment')}; the "
                    "table has them all)")
    return cid, caption, svg


def group_exposure(metric: str, rows: list[tuple[str, float, float, float]]
                   ) -> tuple[str, str, str]:
    """Each item group's share of the lists' attention beside its target share (awrf)."""
    cid = f"chart-exposure-{slug(metric)}"
    svg = charts.hbars(cid, f"Exposure by group ({metric})", [g for g, *_ in rows],
                       [[e, t] for _, e, t, _ in rows], ["exposure", "target"],
                       "share of attention")
    return cid, f"each group's share of the attention of the lists against its target, "\
        f"{html.escape(metric)}", svg


def popularity(view: View) -> list[tuple[str, str, str]]:
    """The Lorenz curves of exposure and the shares per popularity group, when training
    popularity is known."""
    runs = [(r, view.exposure(r)) for r in view.runs if view.exposure(r) is not None]
    if not runs:
        return []
    first = runs[0][1]
    x = np.linspace(0, 1, len(first.lorenz_train))
    lorenz = charts.lorenz("chart-lorenz", f"exposure across the catalog {first.label}", x,
                           [("training", first.lorenz_train),
                            *((r, e.lorenz_recommended) for r, e in runs)])
    groups = charts.groups("chart-popularity-groups",
                           f"where recommendations {first.label} fall",
                           [("training", first.train_share),
                            *((r, e.recommended_share) for r, e in runs)])
    shares = ", ".join(f"{r}: {e.recommended:,} of {plural(e.items, 'item')} recommended, Gini "
                       f"{fixed(e.gini, undefined='undefined')}" for r, e in runs)
    return [("chart-lorenz", f"Lorenz curves ({shares}); training: how the training "
             "interactions spread", lorenz),
            ("chart-popularity-groups", "catalog items in ten equal groups by training "
             "popularity: the share of training interactions and of recommendations on "
             "each", groups)]


def _arithmetic(specs: list[MetricSpec]) -> list[MetricSpec]:
    """Metrics whose per-user values are on the metric's own scale (gm_map keeps logs)."""
    return [s for s in specs if REGISTRY[s.name].overall != GEOMETRIC]
