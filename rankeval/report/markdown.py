"""Markdown: a compact summary for pull requests and GitHub's step summary, verdict first."""

from __future__ import annotations

import os
import re

from rankeval.analysis.gates import outcome, show_pair
from rankeval.report import visible
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
from rankeval.report.numbers import fixed
from rankeval.report.table import (
    comparison,
    corpus_line,
    distribution_rows,
    segment_tables,
    tie_note,
    tie_rows,
    users_line,
    with_ci,
)
from rankeval.settings import footer

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def render(ev) -> str:
    """A compact summary for pull requests and GITHUB_STEP_SUMMARY: verdict first."""
    lines = []
    if ev.gates.verdicts:
        failed = sum(not v.passed for v in ev.gates.verdicts)
        lines += [
            f"**rankeval: {outcome(ev.gates.verdicts)}** " + ("❌" if failed else "✅"),
            "",
            "| | gate | value | condition |",
            "|---|---|---:|---|",
        ]
        for v in ev.gates.verdicts:
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
        cells = (with_ci(ev, name, c, v) for c, v in zip(columns, values, strict=True))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if ev.gates.baseline is not None:
        lines += ["", f"Against {code(ev.gates.baseline['path'])}:", "",
                  "| metric | baseline | current | delta |", "|---|---:|---:|---:|"]
        for name, b, current, delta in comparison(ev):
            lines.append(f"| {name} | {fixed(b)} | {fixed(current)} | "
                         f"{fixed(delta, sign=True)} |")
    for head, rows in segment_tables(ev).values():
        lines += ["", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    if ev.distribution:
        head, rows = distribution_rows(ev)
        lines += ["", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines += ["", "Distribution over users."]
    moved = tie_rows(ev)
    if moved:
        lines += ["", "| metric | pessimistic | reported | optimistic |", "|---|---:|---:|---:|"]
        lines += [f"| {m} | {lo} | {mid} | {hi} |" for m, lo, mid, hi in moved]
        lines += ["", tie_note(ev)]
    elif ev.tied_users:
        lines += ["", tie_note(ev, small=True)]
    if ev.corpus:
        lines += ["", corpus_line(ev)]
    lines += ["", users_line(ev), "", footer(ev.settings)]
    return "\n".join(lines) + "\n"




def append_step_summary(ev, environ=os.environ) -> str | None:
    """Append the Markdown summary to the file named by GITHUB_STEP_SUMMARY, if it is set.

    A summary that cannot be written is a warning for the caller (the returned text), never a
    change of verdict: the gates' exit code is what CI reads."""
    path = environ.get(STEP_SUMMARY)
    if not path:
        return None
    from rankeval.io.output import append_bytes

    try:
        append_bytes(path, (render(ev) + "\n").encode("utf-8"))
    except OSError as exc:
        return f"cannot append to {STEP_SUMMARY} {path}: {exc.strerror or exc}"
    return None


def cell(text: object) -> str:
    """Data in a Markdown table cell: shown as written (``|``, backticks, markup escaped)."""
    shown = visible(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return shown.replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def code(text: object) -> str:
    """Data as a Markdown code span, fenced by more backticks than it holds in a row."""
    shown = visible(text)
    run = max((len(r) for r in re.findall("`+", shown)), default=0)
    fence = "`" * (run + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def render_compare(result) -> str:
    lines = []
    if result.gates:
        mark = "✅" if all(g.passed for g in result.gates) else "❌"
        lines += [f"**rankeval: {outcome(result.gates)}** {mark}", ""]
        lines += [f"- {'✅' if g.passed else '❌'} {cell(g.message())}" for g in result.gates]
        lines.append("")
    lines += ["| run | " + " | ".join(result.metrics) + " |",
             "|---|" + "---:|" * len(result.metrics)]
    for r in result.runs:
        cells = [compare_cell(result, r.name, m)[0] for m in result.metrics]
        lines.append(f"| {cell(run_label(result, r.name))} | " + " | ".join(cells) + " |")
    head = detail_head(result)
    lines += ["", "| " + " | ".join(head) + " |",
              "|" + "".join("---|" if h in LEFT else "---:|" for h in head)]
    names = head.index("metric")  # run (and baseline) are data: escaped
    lines += ["| " + " | ".join([*(cell(x) for x in row[:names]), *row[names:]]) + " |"
              for row in detail_rows(result)]
    for pairs in result.pairs:
        head, rows = pairs_rows(pairs)
        lines += ["", "| " + " | ".join(cell(h) for h in head) + " |",
                  "|---|---:|---|" + "---:|" * (len(head) - 3)]
        lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
        lines += ["", cell(pairs_note(pairs, result.options["alpha"],
                                      result.options["rounds"])) + "."]
    for column, (head, rows) in compare_segment_tables(result).items():
        lines += ["", "| " + " | ".join(cell(h) for h in head) + " |",
                  "|---|---:|---|" + "---:|" * (len(head) - 3)]
        lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
        lines += ["", cell(f"Per {column}: {segment_note(result)}.")]
    lines += ["", *(cell(line) for line in compare_footer(result))]
    return "\n".join(lines) + "\n"


def render_power(result) -> str:
    from rankeval.report.analyses import power_note, power_rows

    head, rows = power_rows(result)
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join([*lines, "", cell(power_note(result))]) + "\n"


def render_metrics(registry) -> str:
    """The metric registry (``rankeval metrics``; the table of the Metric reference)."""
    from rankeval.report.catalog import rows

    lines = ["| metric | aliases | definition | per user | takes | `--ties expected` |",
             "|---|---|---|---|---|---|"]
    for name, _, summary, formula, takes, expected in rows(registry):
        aliases = ", ".join(f"`{a}`" for a in registry[name].aliases)
        lines.append(f"| `{name}` | {aliases} | {summary} | `{formula}` | {takes} | "
                     f"{expected} |")
    return "\n".join(lines) + "\n"
