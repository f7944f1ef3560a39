"""The summary as a rich table for people (score and compare), and its plain-text and HTML
forms for notebooks."""

from __future__ import annotations

import html
import io

from rich.markup import escape

from rankeval.analysis.gates import show_pair
from rankeval.errors import plural
from rankeval.registry import REGISTRY
from rankeval.report import visible
from rankeval.report.numbers import UNDEFINED, count, defined, fixed
from rankeval.settings import footer


def data(text: object) -> str:
    """Data in rich markup: shown as written, never read as markup or terminal codes."""
    return escape(visible(text))


def with_ci(ev, name: str, column, value: float | None, undefined: str = UNDEFINED) -> str:
    """The mean, with its interval when ``score --ci`` asked for one; ``undefined`` (n/a)
    when undefined, empty where not asked (None)."""
    from rankeval.names import MetricSpec, from_name

    if value is None:
        return ""
    spec = from_name(name) if "@" in name else MetricSpec(name, column if isinstance(column, int)
                                                           else None)
    if REGISTRY[spec.name].total:
        return count(value, undefined)  # a count summed over users
    interval = ev.intervals.get(str(spec))
    if interval is None or not defined(value):
        return fixed(value, undefined=undefined)
    return f"{fixed(value)} [{fixed(interval[0])}, {fixed(interval[1])}]"


def corpus_line(ev) -> str:
    """Which rows are corpus-level: one value for the run, not a mean over users."""
    names = list(dict.fromkeys(s.name for s in ev.specs if str(s) in ev.corpus))
    return ("corpus-level (one value for the whole run, not a mean over users): "
            + ", ".join(names))


def users_line(ev) -> str:
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


def render(ev, console) -> None:
    """Print a rich table: one row per metric, one column per K, counts below."""
    from rich.table import Table

    columns, rows = ev.summary_rows()
    table = Table(title=None, box=None, header_style="bold", pad_edge=False)
    table.add_column("metric", style="bold")
    for k in columns:
        table.add_column(f"@{k}", justify="right", overflow="fold")
    for name, values in rows:
        table.add_row(name, *(escape(with_ci(ev, name, c, v)) for c, v in zip(columns, values,
                                                                       strict=True)))
    console.print(table)
    if ev.intervals:
        console.print(f"in brackets: {ev.interval_level:.0%} bootstrap confidence intervals "
                      "over users", style="dim", highlight=False)
    if ev.distribution:
        console.print()
        dist = Table(box=None, header_style="bold", pad_edge=False)
        head, rows = distribution_rows(ev)
        for column in head:
            dist.add_column(column, justify="left" if column == "metric" else "right",
                            overflow="fold")
        for row in rows:
            dist.add_row(*row)
        console.print(dist)
        console.print("distribution over users (users a metric cannot score left out)",
                      style="dim", highlight=False)
    for column, (head, rows) in segment_tables(ev).items():
        console.print()
        seg = Table(box=None, header_style="bold", pad_edge=False)
        for name in head:
            seg.add_column(name, justify="left" if name == column else "right",
                           overflow="fold")
        for row in rows:
            seg.add_row(*(data(x) for x in row))
        console.print(seg)
    if ev.corpus:
        console.print(corpus_line(ev), style="dim", highlight=False, soft_wrap=True)
    console.print(users_line(ev), style="dim", highlight=False, soft_wrap=True)
    console.print(footer(ev.settings), style="dim", highlight=False, soft_wrap=True)
    moved = tie_rows(ev)
    if ev.tied_users and not moved:
        console.print(tie_note(ev, small=True), style="dim", highlight=False, soft_wrap=True)
    if moved:
        console.print()
        ties = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("metric", "pessimistic", "reported", "optimistic"):
            ties.add_column(column, justify="left" if column == "metric" else "right",
                            overflow="fold")
        for row in moved:
            ties.add_row(*row)
        console.print(ties)
        console.print(tie_note(ev), style="dim", highlight=False, soft_wrap=True)
    if ev.gates.baseline is not None:
        console.print()
        base = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("metric", "baseline", "current", "delta"):
            base.add_column(column, justify="left" if column == "metric" else "right",
                            overflow="fold")
        for name, b, current, delta in comparison(ev):
            style = "red" if delta < 0 else "green" if delta > 0 else None
            base.add_row(name, fixed(b), fixed(current), fixed(delta, sign=True), style=style)
        console.print(base)
        console.print(f"baseline: {data(ev.gates.baseline['path'])}", style="dim", highlight=False)
    if ev.gates.verdicts:
        console.print()
        gates = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("gate", "value", "condition", "verdict"):
            gates.add_column(column, justify="right" if column == "value" else "left",
                             overflow="fold")
        for v in ev.gates.verdicts:
            verdict = "[green]passed[/]" if v.passed else "[bold red]FAILED[/]"
            value, _ = show_pair(v.value, v.limit)
            gates.add_row(data(v.metric), value, v.condition(), verdict)
        console.print(gates)


def segment_tables(ev) -> dict[str, tuple[list[str], list[list[str]]]]:
    """Per segment column: (header, rows) with the user count and every per-user metric."""
    out = {}
    for column, segments in ev.segments.items():
        metrics = list(segments[0].metrics) if segments else []
        rows = [[s.value, f"{s.users:,}", *(fixed(s.metrics[m]) for m in metrics)]
                for s in segments]
        out[column] = ([column, "users", *metrics], rows)
    return out


def distribution_rows(ev) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the distribution over users: one row per metric, one column per
    statistic; shares (zeros) as percentages."""
    stats = list(next(iter(ev.distribution.values())))
    rows = []
    for metric, values in ev.distribution.items():
        rows.append([metric, *((f"{values[s]:.1%}" if defined(values[s]) else UNDEFINED)
                               if s == "zeros" else fixed(values[s]) for s in stats)])
    return ["metric", *stats], rows


def tie_rows(ev) -> list[list[str]]:
    """(metric, pessimistic, reported, optimistic) for the means the order of tied items can
    move."""
    rows = [[m, fixed(lo), fixed(ev.metrics[m]), fixed(hi)]
            for m, (lo, hi) in ev.tie_range.items()]
    return [row for row in rows if row[1] != row[3]]  # moves that show at 4 decimals


def tie_note(ev, small: bool = False) -> str:
    how = {"expected": "the expected value over all orders of tied items",
           "optimistic": "the optimistic order", "pessimistic": "the pessimistic order"}
    reported = how.get(ev.settings.ties, f"ties broken by --ties {ev.settings.ties}")
    have = "has" if ev.tied_users == 1 else "have"
    if small:
        return (f"tie sensitivity: {plural(ev.tied_users, 'user')} {have} tied scores; no mean "
                "changes in its 4th decimal between the worst and best order of their ties")
    return (f"tie sensitivity: {plural(ev.tied_users, 'user')} {have} tied scores; reported: "
            f"{reported}; the range is relevant items last to first within each tie")


def comparison(ev) -> list[tuple[str, float, float, float]]:
    """(metric, baseline, current, delta), as ``Evaluation.judged`` recorded them."""
    base = ev.gates.baseline or {"metrics": {}, "delta": {}}
    return [(m, b, ev.metrics[m], base["delta"][m]) for m, b in base["metrics"].items()]



def plain_text(ev, how=None) -> str:
    """The table (``how``: the renderer, default ``render``) as plain text, as wide as it
    needs (``repr``)."""
    from rich.console import Console

    buffer = io.StringIO()
    (how or render)(ev, Console(file=buffer, width=100_000, color_system=None))
    return buffer.getvalue()


def html_summary(ev) -> str:
    """The summary table as HTML, for notebooks."""
    columns, rows = ev.summary_rows()
    head = "".join(f"<th>@{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        f"<tr><th>{html.escape(name)}</th>"
        + "".join(f"<td>{html.escape(with_ci(ev, name, c, v))}</td>"
                  for c, v in zip(columns, values, strict=True))
        + "</tr>"
        for name, values in rows
    )
    extra = [_html_table(head, rows) for head, rows in segment_tables(ev).values()]
    if ev.distribution:
        extra.append(_html_table(*distribution_rows(ev)))
    moved = tie_rows(ev)
    if moved:
        extra.append(_html_table(["metric", "pessimistic", "reported", "optimistic"], moved))
    lines = [users_line(ev), footer(ev.settings)]
    if ev.corpus:
        lines.insert(0, corpus_line(ev))
    notes = "<br>".join(html.escape(t) for t in lines)
    return (f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{body}</tbody></table>"
            + "".join(extra) + f"<p><small>{notes}</small></p>")


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    """A small HTML table of text cells (escaped)."""
    top = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table>"


def render_power(result, console) -> None:
    from rich.table import Table

    from rankeval.report.analyses import power_note, power_rows

    head, rows = power_rows(result)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for i, name in enumerate(head):
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for row in rows:
        table.add_row(*(escape(x) for x in row))
    console.print(table)
    console.print(data(power_note(result)), style="dim", highlight=False, soft_wrap=True)


def render_compare(result, console) -> None:
    from rich.table import Table

    from rankeval.report.analyses import pairs_note, pairs_rows
    from rankeval.report.comparison import (
        LEFT,
        compare_cell,
        compare_footer,
        compare_segment_tables,
        detail_head,
        detail_rows,
        run_label,
        segment_note,
    )

    table = Table(box=None, header_style="bold", pad_edge=False)
    table.add_column("run", style="bold")
    # Aligned here, not by rich: a difference without a mark keeps a space in the mark's
    # place, which rich's right justification would strip, and the columns would shift.
    cells = {m: [compare_cell(result, r.name, m, pad=True) for r in result.runs]
             for m in result.metrics}
    widths = {m: max(len(m), *(len(text) for text, _ in cells[m])) for m in result.metrics}
    for metric in result.metrics:
        table.add_column(escape(metric.rjust(widths[metric])), overflow="fold")
    for i, r in enumerate(result.runs):
        row = []
        for metric in result.metrics:
            text, direction = cells[metric][i]
            text = text.rjust(widths[metric])
            row.append(f"[{'green' if direction > 0 else 'red'}]{text}[/]" if direction
                       else text)
        table.add_row(data(run_label(result, r.name)), *row)
    console.print(table)
    for line in compare_footer(result):
        console.print(data(line), style="dim", highlight=False, soft_wrap=True)

    console.print()
    detail = Table(box=None, header_style="bold", pad_edge=False)
    for column in detail_head(result):
        detail.add_column(column, justify="left" if column in LEFT else "right",
                          overflow="fold")
    for row in detail_rows(result):
        detail.add_row(*(data(x) for x in row))
    console.print(detail)
    for pairs in result.pairs:
        console.print()
        head, rows = pairs_rows(pairs)
        matrix = Table(box=None, header_style="bold", pad_edge=False)
        for i, name in enumerate(head):
            matrix.add_column(data(name), justify="left" if i in (0, 2) else "right",
                              overflow="fold")
        for row in rows:
            matrix.add_row(*(data(x) for x in row))
        console.print(matrix)
        console.print(data(pairs_note(pairs, result.options["alpha"], result.options["rounds"])),
                      style="dim", highlight=False, soft_wrap=True)
    for column, (head, rows) in compare_segment_tables(result).items():
        console.print()
        seg = Table(box=None, header_style="bold", pad_edge=False)
        for name in head:
            seg.add_column(name, justify="right" if name not in (column, "run") else "left",
                           overflow="fold")
        for row in rows:
            seg.add_row(*(data(x) for x in row))
        console.print(seg)
        console.print(data(f"per {column}: {segment_note(result)}"), style="dim",
                      highlight=False, soft_wrap=True)
    for run, metrics in result.top.items():
        for metric, changes in metrics.items():
            console.print()
            console.print(f"{data(run)} vs {data(result.baseline)} on {metric}:", style="bold",
                          highlight=False)
            for label in ("helped", "hurt"):
                for row in changes[label]:
                    console.print(f"  {label:6} {data(row['user'])}: {fixed(row['baseline'])} "
                                  f"-> {fixed(row['run'])}", highlight=False)


def render_metrics(registry, console) -> None:
    """The metric registry (``rankeval metrics``)."""
    from rich.table import Table

    from rankeval.report.catalog import HEAD, rows

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in HEAD:
        table.add_column(column)
    for row in rows(registry):
        table.add_row(*(escape(x) for x in row))
    console.print(table)


def render_validation(result, console, strict: bool = False) -> None:
    """``rankeval validate``: each input, the user counts, then every warning and error
    (with ``strict``, an unacknowledged warning is an error)."""
    from rankeval.notices import spelled

    spell = spelled()
    lines = []
    for role, info in result.inputs.items():
        cols = ", ".join(f"{r} {c!r}" for r, c in info["columns"].items())
        users = f", {info['users']:,} users" if "users" in info else ""
        lines.append(f"{role}: {info['path']} ({info['format']}): {info['rows']:,} rows{users}; "
                     f"columns: {cols}")
    if result.users is not None:
        u = result.users
        lines.append(
            f"users: {u.evaluated:,} can be evaluated · {u.in_truth:,} in truth · "
            f"{u.in_predictions:,} in predictions · {u.without_relevant:,} without relevant "
            f"items · {u.without_predictions:,} without predictions · "
            f"{u.only_in_predictions:,} only in predictions"
        )
        lines.append(f"prediction rows beyond the largest K: {result.rows_beyond_k:,}")
    lines += [f"{'error' if strict and n.code not in result.acknowledged else 'warning'}: "
              f"{n.render(spell)}" for n in result.notices]
    lines += [f"error: {e.render(spell)}" for e in result.errors]
    console.file.write("\n".join(lines) + "\n")
