"""Evaluation -> text: rich table, JSON, CSV, Markdown, per-user files. Formatting only."""

from __future__ import annotations

import csv
import io
import json
import math

from .evaluation import Evaluation
from .gates import show_pair

FORMATS = ("table", "json", "csv", "markdown", "trec")


def _fmt(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.4f}"


def _with_ci(ev: Evaluation, name: str, column, value: float) -> str:
    """The mean, with its interval when ``score --ci`` asked for one."""
    from .metric_names import MetricSpec

    spec = MetricSpec(name, column if isinstance(column, int) else None)
    interval = ev.intervals.get(str(spec))
    if interval is None or math.isnan(value):
        return _fmt(value)
    return f"{value:.4f} [{interval[0]:.4f}, {interval[1]:.4f}]"


def users_line(ev: Evaluation) -> str:
    """Every user count of SPEC section 2, in words."""
    u, s = ev.users, ev.settings
    parts = [
        f"{u.evaluated:,} evaluated",
        f"{u.in_truth:,} in truth",
        f"{u.in_predictions:,} in predictions",
    ]
    if u.without_relevant:
        fate = "scored 0" if s.zero_relevant_users == "zero" else "not evaluated"
        parts.append(f"{u.without_relevant:,} without relevant items ({fate})")
    if u.without_predictions:
        fate = "skipped" if s.skip_missing_users else "scored 0"
        parts.append(f"{u.without_predictions:,} without predictions ({fate})")
    if u.only_in_predictions:
        parts.append(f"{u.only_in_predictions:,} only in predictions (not evaluated)")
    return "users: " + " · ".join(parts)


def settings_line(ev: Evaluation) -> str:
    """The conventions that shaped the numbers."""
    s = ev.settings
    relevant = (
        "relevance > 0"
        if s.relevance_threshold is None
        else f"relevance >= {s.relevance_threshold:g}"
    )
    ap = "min(R, K)" if s.ap_denominator == "min" else "R"
    parts = [
        f"gain {s.gain}",
        f"AP / {ap}",
        f"RR target {s.rr_target}",
        f"relevant: {relevant}",
        f"ties {s.ties}",
        f"users without relevant items: {s.zero_relevant_users}",
        f"users without predictions: {'skip' if s.skip_missing_users else 'zero'}",
    ]
    if s.compat:
        parts.insert(0, f"compat {s.compat}")
    return "settings: " + " · ".join(parts)


def render_table(ev: Evaluation, console) -> None:
    """Print a rich table: one row per metric, one column per K, counts below."""
    from rich.table import Table

    columns, rows = ev.summary_rows()
    table = Table(title=None, box=None, header_style="bold", pad_edge=False)
    table.add_column("metric", style="bold")
    for k in columns:
        table.add_column(f"@{k}", justify="right")
    for name, values in rows:
        table.add_row(name, *(_with_ci(ev, name, c, v) for c, v in zip(columns, values,
                                                                       strict=True)))
    console.print(table)
    if ev.intervals:
        console.print(f"in brackets: {ev.interval_level:.0%} bootstrap confidence intervals "
                      "over users", style="dim", highlight=False)
    console.print(users_line(ev), style="dim", highlight=False, soft_wrap=True)
    console.print(settings_line(ev), style="dim", highlight=False, soft_wrap=True)
    if ev.baseline is not None:
        console.print()
        base = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("metric", "baseline", "current", "delta"):
            base.add_column(column, justify="left" if column == "metric" else "right")
        for name, b, current, delta in _comparison(ev):
            style = "red" if delta < 0 else "green" if delta > 0 else None
            base.add_row(name, f"{b:.4f}", f"{current:.4f}", f"{delta:+.4f}", style=style)
        console.print(base)
        console.print(f"baseline: {ev.baseline['path']}", style="dim", highlight=False)
    if ev.verdicts:
        console.print()
        gates = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("gate", "value", "condition", "verdict"):
            gates.add_column(column, justify="right" if column == "value" else "left")
        for v in ev.verdicts:
            verdict = "[green]passed[/]" if v.passed else "[bold red]FAILED[/]"
            value, _ = show_pair(v.value, v.limit)
            gates.add_row(v.metric, value, v.condition(), verdict)
        console.print(gates)


def render_json(ev: Evaluation) -> str:
    return json.dumps(ev.to_dict(), indent=2) + "\n"


def render_csv(ev: Evaluation) -> str:
    """One row per metric@K: ``metric,name,k,value`` with full-precision values."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["metric", "name", "k", "value"])
    for spec in ev.specs:
        writer.writerow([str(spec), spec.name, spec.column, repr(ev.metrics[str(spec)])])
    return out.getvalue()


def _comparison(ev: Evaluation) -> list[tuple[str, float, float, float]]:
    base = ev.baseline or {"metrics": {}}
    return [(m, b, ev.metrics[m], ev.metrics[m] - b) for m, b in base["metrics"].items()]


def render_markdown(ev: Evaluation) -> str:
    """A compact summary for pull requests and GITHUB_STEP_SUMMARY: verdict first."""
    lines = []
    if ev.verdicts:
        failed = sum(not v.passed for v in ev.verdicts)
        lines += [
            f"**rankeval: {failed} of {len(ev.verdicts)} gates failed** ❌"
            if failed
            else f"**rankeval: all {len(ev.verdicts)} gates passed** ✅",
            "",
            "| | gate | value | condition |",
            "|---|---|---:|---|",
        ]
        for v in ev.verdicts:
            mark = "✅" if v.passed else "❌"
            lines.append(f"| {mark} | {v.metric} | {show_pair(v.value, v.limit)[0]} | "
                         f"{v.condition()} |")
        lines.append("")
    columns, rows = ev.summary_rows()
    lines += [
        "| metric | " + " | ".join(f"@{k}" for k in columns) + " |",
        "|---|" + "---:|" * len(columns),
    ]
    for name, values in rows:
        cells = (_with_ci(ev, name, c, v) for c, v in zip(columns, values, strict=True))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if ev.baseline is not None:
        lines += ["", f"Against `{ev.baseline['path']}`:", "",
                  "| metric | baseline | current | delta |", "|---|---:|---:|---:|"]
        for name, b, current, delta in _comparison(ev):
            lines.append(f"| {name} | {b:.4f} | {current:.4f} | {delta:+.4f} |")
    lines += ["", users_line(ev), "", settings_line(ev)]
    return "\n".join(lines) + "\n"


def render_trec(ev: Evaluation, per_user: bool = False) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``.

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    from .trec import measure_name

    names = [measure_name(s) if ev.settings.compat else str(s) for s in ev.specs]
    lines = []
    if per_user:
        columns = [ev.values(spec).tolist() for spec in ev.specs]
        padded = [f"{name:<22}\t" for name in names]
        for user, *values in zip(ev.user_id_array.to_pylist(), *columns, strict=True):
            lines += [f"{p}{user}\t{v:.4f}\n" for p, v in zip(padded, values, strict=True)]
    for spec, name in zip(ev.specs, names, strict=True):
        lines.append(_trec_line(name, "all", ev.metrics[str(spec)]))
    return "".join(lines)


def _trec_line(name: str, user: str, value: float) -> str:
    return f"{name:<22}\t{user}\t{value:.4f}\n"


def render_text(ev: Evaluation, fmt: str, per_user: bool = False) -> str:
    """JSON, CSV, Markdown or trec as one string (the table is printed by ``render_table``)."""
    if fmt == "trec":
        return render_trec(ev, per_user)
    return {"json": render_json, "csv": render_csv, "markdown": render_markdown}[fmt](ev)


def _compare_cell(result, run: str, metric: str) -> tuple[str, bool]:
    """``0.3391 +0.0123*`` and whether it is a significant difference."""
    mean = result.mean(run, metric)
    cell = result.cell(run, metric)
    if cell is None:  # the baseline itself
        return f"{mean:.4f}", False
    mark = "*" if cell.significant else ""
    return f"{mean:.4f} {cell.stats.delta:+.4f}{mark}", cell.significant


def _compare_footer(result) -> list[str]:
    o = result.options
    lines = [
        f"baseline: {result.baseline} · test: {o['test']} · correction: {o['correction']} · "
        f"* significant at alpha {o['alpha']:g} · {len(result.shared_users):,} users compared",
    ]
    return lines


def render_compare_table(result, console) -> None:
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("run", style="bold")
    for metric in result.metrics:
        table.add_column(metric, justify="right")
    for r in result.runs:
        cells = []
        for metric in result.metrics:
            text, significant = _compare_cell(result, r.name, metric)
            cell = result.cell(r.name, metric)
            if significant:
                text = f"[{'green' if cell.stats.delta > 0 else 'red'}]{text}[/]"
            cells.append(text)
        name = f"{r.name} (baseline)" if r.name == result.baseline else r.name
        table.add_row(name, *cells)
    console.print(table)
    for line in _compare_footer(result):
        console.print(line, style="dim", highlight=False, soft_wrap=True)

    console.print()
    detail = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("run", "metric", "delta", f"{result.options['ci_level']:.0%} CI", "p",
                   "p adjusted", "effect d", "win/tie/loss"):
        detail.add_column(column, justify="left" if column in ("run", "metric") else "right")
    for c in result.cells:
        s = c.stats
        detail.add_row(c.run, c.metric, f"{s.delta:+.4f}", f"[{s.ci_low:+.4f}, {s.ci_high:+.4f}]",
                       f"{s.p_value:.4g}", f"{c.p_adjusted:.4g}" + ("*" if c.significant else ""),
                       f"{s.effect_size:+.3f}", f"{s.wins}/{s.ties}/{s.losses}")
    console.print(detail)
    for run, metrics in result.top.items():
        for metric, changes in metrics.items():
            console.print()
            console.print(f"{run} vs {result.baseline} on {metric}:", style="bold",
                          highlight=False)
            for label in ("helped", "hurt"):
                for row in changes[label]:
                    console.print(f"  {label:6} {row['user']}: {row['baseline']:.4f} -> "
                                  f"{row['run']:.4f}", highlight=False)


def render_compare_markdown(result) -> str:
    lines = ["| run | " + " | ".join(result.metrics) + " |",
             "|---|" + "---:|" * len(result.metrics)]
    for r in result.runs:
        cells = [_compare_cell(result, r.name, m)[0] for m in result.metrics]
        name = f"{r.name} (baseline)" if r.name == result.baseline else r.name
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", *_compare_footer(result)]
    return "\n".join(lines) + "\n"


def render_compare_csv(result) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "metric", "mean", "baseline_mean", "delta", "ci_low", "ci_high",
                     "p_value", "p_adjusted", "significant", "effect_size", "wins", "ties",
                     "losses"])
    for c in result.cells:
        s = c.stats
        writer.writerow([c.run, c.metric, repr(s.mean_b), repr(s.mean_a), repr(s.delta),
                         repr(s.ci_low), repr(s.ci_high), repr(s.p_value), repr(c.p_adjusted),
                         c.significant, repr(s.effect_size), s.wins, s.ties, s.losses])
    return out.getvalue()
