"""The sections of the compare HTML report (the page itself: ``html``; the pieces it is made
of: ``html_page``)."""

from __future__ import annotations

import math

from rankeval.analysis.changes import most_changed
from rankeval.analysis.ppi import UNDEFINED as UNDEFINED_INTERVAL
from rankeval.analysis.ppi import Interval
from rankeval.errors import plural
from rankeval.names import from_name, k_runs
from rankeval.report import charts, figures
from rankeval.report.analyses import pairs_note, pairs_rows
from rankeval.report.comparison import (
    compare_footer,
    compare_segment_tables,
    correction_words,
    mark_of,
    run_label,
    segment_note,
    test_cells,
    tests_corrected,
)
from rankeval.report.gold_tables import gold_compare
from rankeval.report.html_page import (
    LONG_ROWS,
    UNDEFINED,
    chart_section,
    charts_grid,
    charts_section,
    conventions_section,
    distributions_section,
    fold_away,
    notices_section,
    section,
    section_table,
    table,
    text,
)
from rankeval.report.numbers import defined, fixed
from rankeval.report.sections import overlap_section, run_order, top_rows
from rankeval.settings import ties_words


def compare_sections(result) -> list[str]:
    view = figures.View.of_comparison(result)
    notices = [prefix + n.message for prefix, n in result.said()]
    long = len(result.metrics) > LONG_ROWS
    return [
        _verdict(result), _summary(result, headline=long), _gold(result), _pairs(result),
        charts_section("curves", view), _forest(result), charts_section("differences", result),
        distributions_section(view), _segments(result), charts_section("popularity", view),
        _top(result), _overlap(result), _summary(result, folded=True) if long else "",
        notices_section(notices),
        conventions_section(result.settings, [*compare_footer(result), *_orders(result)],
                            _inputs(result), _order(result)),
    ]


def _order(result) -> str | None:
    """What ordered every run's lists, when the same for all (else ``_orders`` says)."""
    orders = {run_order(r.evaluation) for r in result.runs}
    return orders.pop() if len(orders) == 1 else None


def _orders(result) -> list[str]:
    """Where the runs were ordered differently: what ordered each run's lists."""
    if _order(result) is not None:
        return []
    return [f"{r.name}: {ties_words(result.settings, run_order(r.evaluation))}"
            for r in result.runs]


def _verdict(result) -> str:
    """Per run (and baseline): on how many metrics it is significantly better and worse."""
    rows = []
    for base in result.baselines:
        for run in result.candidates:
            rows.append(_verdict_row(result, run, base))
    a = result.options["alpha"]
    gates = "".join(f'<p class="banner{"" if g.passed else " failed"}">'
                    f'{"✓" if g.passed else "✗"} {text(g.message())}</p>' for g in result.gates)
    several = len(result.baselines) > 1
    against = ("the baselines " + ", ".join(text(b) for b in result.baselines) if several
               else f"the baseline {text(result.baseline)}")
    return section("verdict", "Verdict", gates + table(
        ["run", "significantly better", "significantly worse", "no significant difference"],
        rows, raw=True), f"Against {against}, at alpha {a:g} after the correction over the "
        f"{'tests' if several else 'runs'}: "
        f"{text(correction_words(result.options, tests_corrected(result)))}.")


def _verdict_row(result, run: str, base: str) -> list[str]:
    cells = [c for c in result.cells if c.run == run and c.baseline == base]
    better = [c.metric for c in cells if c.significant and c.stats.delta > 0]
    worse = [c.metric for c in cells if c.significant and c.stats.delta < 0]
    return [text(result.label(cells[0])),
            f'<span class="pass">{len(better)}</span>' + _list(better),
            f'<span class="{"fail" if worse else ""}">{len(worse)}</span>' + _list(worse),
            str(len(cells) - len(better) - len(worse))]


def _gold(result) -> str:
    """``--gold``: each difference from the baseline under the machine judgments alone and
    by PPI++, drawn side by side with their intervals, then the table and its notes."""
    parts = gold_compare(result)
    if not parts:
        return ""
    (part,) = parts
    several = len(result.baselines) > 1
    labels, values = [], []
    for d in result.gold.differences:
        cell = result.cell(d.run, d.metric, d.baseline)
        machine = (Interval(cell.stats.delta, math.nan, cell.stats.ci_low, cell.stats.ci_high)
                   if cell is not None else UNDEFINED_INTERVAL)
        labels.append(f"{d.run} vs {d.baseline}: {d.metric}" if several else
                      f"{d.run}: {d.metric}")
        values.append([machine, d.estimate.ppi])
    svg = charts.intervals("gold-differences", "Differences from the baseline", labels,
                           ["machine only", "PPI"], values,
                           xlabel="difference from the baseline (run - baseline)", zero=True)
    body = charts_grid([("gold-chart", f"per run and metric: the difference from the "
                         f"baseline under the machine judgments alone and by PPI, with "
                         f"{result.gold.level:.0%} intervals", svg)])
    body += section_table(part)
    notes = "".join(f'<p class="note">{text(n)}</p>' for n in part.notes)
    return section("gold", part.heading(), body + notes)


def _pairs(result) -> str:
    """Every pair of runs (--all-pairs): per metric, the heatmap and the matrix."""
    if not result.pairs:
        return ""
    body = ""
    for pairs in result.pairs:
        cid = f"chart-pairs-{figures.slug(pairs.metric)}"
        svg = charts.heatmap(cid, f"{pairs.metric}: column - row", pairs.runs,
                             pairs.difference, pairs.significant)
        note = pairs_note(pairs, result.options["alpha"], result.options["rounds"])
        body += (f"<h3>{text(pairs.metric)}</h3>" + charts_grid([(cid, note, svg)])
                 + table(*pairs_rows(pairs)))
    return section("all-pairs", "All pairs", body, "Every run against every other; runs that "
                   "share a group letter do not differ significantly.")


def _overlap(result) -> str:
    """Rank-biased overlap of each run with its baseline (--rbo)."""
    if not result.overlaps:
        return ""
    part = overlap_section(result.overlaps)
    return section("rbo", part.title, table(list(part.head), [list(r) for r in part.rows]),
                   part.notes[0])


def _list(metrics: list[str]) -> str:
    return f' <span class="note">({text(compact(metrics))})</span>' if metrics else ""


def compact(metrics: list[str]) -> str:
    """``ndcg@1, ndcg@2, ..., ndcg@20, recall@5`` -> ``ndcg@1..20, recall@5``."""
    rows: dict[str, list] = {}
    for m in metrics:
        spec = from_name(m)
        rows.setdefault(spec.row if spec.k is not None else m, []).append(spec.k)
    parts = []
    for row, ks in rows.items():
        if ks == [None]:
            parts.append(row)
            continue
        parts.append(f"{row}@{k_runs(ks, ',')}")
    return ", ".join(parts)


def _summary(result, headline: bool = False, folded: bool = False) -> str:
    """Every metric against the baseline; ``headline``: each metric at one cut-off only (a
    long table leads with it, and is folded below the charts, ``folded``)."""
    metrics = result.metrics
    if headline:
        metrics = [str(s) for s in figures.headline(list(result.settings.specs))]
    level = f"{result.options['ci_level']:.0%} CI"
    several = len(result.baselines) > 1
    head = ["metric", *(run_label(result, b) for b in result.baselines)]
    for run in result.candidates:
        head.append(run)
        for base in result.baselines:
            head += [f"delta {run} vs {base}" if several else f"delta {run}", level,
                     "p adjusted", "win/tie/loss"]
    rows = []
    for metric in metrics:
        row = [text(metric), *(_mean(result, b, metric) for b in result.baselines)]
        for run in result.candidates:
            row.append(_mean(result, run, metric))
            for base in result.baselines:
                row += _delta_cells(result.cell(run, metric, base))
        rows.append(row)
    intro = (f"Means over the {plural(len(result.shared_users), 'user')} every run evaluates; "
             f"delta = "
             "run - baseline; * significant after correction, ? the test is undefined.")
    if result.intervals:
        intro += " Means carry bootstrap confidence intervals."
    body = table(head, rows, raw=True)
    if headline:
        return section("headline", "At a glance", body, intro + " Each metric at one "
                       "cut-off (10 when asked, else the deepest); every cut-off is in the "
                       "full table below the charts.")
    if folded:
        body = fold_away(f"every metric at every cut-off ({plural(len(rows), 'row')})", body)
    return section("summary", "Summary", body, intro)


def _delta_cells(c) -> list[str]:
    """The delta (marked, coloured when significant), interval, adjusted p and
    win/tie/loss of one test."""
    delta, ci, _, _, p, wtl = test_cells(c)
    p = p.rstrip("*~?")  # the delta carries the mark
    if not c.defined:
        delta = ci = p = wtl = UNDEFINED
    mark = mark_of(c) if c.tested and c.defined else ""
    cls = ("pass" if c.stats.delta > 0 else "fail") if c.significant else ""
    return [f'<span class="{cls}">{delta}{mark}</span>', ci, p, wtl]


def _mean(result, run: str, metric: str) -> str:
    mean = result.mean(run, metric)
    band = result.intervals.get(run, {}).get(metric)
    if not defined(mean):
        return UNDEFINED
    return fixed(mean) + (f" [{fixed(band[0])}, {fixed(band[1])}]" if band else "")


def _forest(result) -> str:
    wtl = figures.win_tie_loss(result)
    return chart_section("forest", "Differences from the baseline",
                         figures.forest(result) + ([wtl] if wtl else []),
                         "Each dot is a difference of means with its confidence interval; "
                         "a difference is coloured when significant after the correction.")


TOP = 5  # users per list when --top-changes did not say


def _top(result) -> str:
    shown = [str(s) for s in figures.headline(list(result.settings.specs))]
    top = result.top or most_changed(result.values, result.shared_users, result.baseline,
                                      result.candidates, shown, TOP)
    body = ""
    for run, metrics in top.items():
        for metric, lists in metrics.items():
            if metric not in shown or not (lists["helped"] or lists["hurt"]):
                continue
            body += f"<h3>{text(run)}: {text(metric)}</h3>" + table(
                *top_rows(result.baseline, run, lists))
    if not body:
        return ""
    return section("top-changes", "Top changes", body,
                   f"The users a run helps and hurts most, against {text(result.baseline)}, "
                   "at one cut-off per metric (--top-changes N sets how many, and puts "
                   "every cut-off in the JSON report).")


def _segments(result) -> str:
    if not result.segments:
        return ""
    body = ""
    tables = compare_segment_tables(result)
    runs = [r.name for r in result.runs]
    for column, rows in result.segments.items():
        metrics = list(dict.fromkeys(c.metric for row in rows for c in row["cells"]))
        shown = [str(s) for s in figures.headline([s for s in result.settings.specs
                                                   if str(s) in metrics])]
        labels, users = [r["value"] for r in rows], [r["users"] for r in rows]
        items = []
        for m in shown:
            values = []
            for row in rows:
                means = {c.baseline: c.stats.mean_a for c in row["cells"] if c.metric == m}
                means |= {c.run: c.stats.mean_b for c in row["cells"] if c.metric == m}
                values.append([means[run] for run in runs])
            items.append(figures.segment_bars(column, labels, users, m, values, runs))
        head, lines = tables[column]
        body += f"<h3>By {text(column)}</h3>" + charts_grid(items) + table(head, lines)
    return section("segments", "Segments", body,
                   "Each run's mean within each segment; in the tables, "
                   f"{text(segment_note(result))}.")


def _inputs(result) -> str:
    rows = [[run_label(result, r.name), r.path,
             f"{r.evaluation.inputs['predictions'].rows:,}",
             f"{r.evaluation.users.evaluated:,}", f"{r.dropped:,}"] for r in result.runs]
    truth = result.runs[0].evaluation.inputs["truth"]
    rows.append(["truth", truth.path, f"{truth.rows:,}", f"{truth.users:,} in truth", ""])
    return table(["input", "path", "rows", "users evaluated", "left out (not in every run)"],
                 rows)
