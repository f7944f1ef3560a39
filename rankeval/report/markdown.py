"""Markdown: a compact summary for pull requests and GitHub's step summary, verdict first."""

from __future__ import annotations

import os

from ..gates import show_pair
from ..settings import footer
from .table import compare_cell, compare_footer, comparison, users_line, with_ci

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def render(ev) -> str:
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
        cells = (with_ci(ev, name, c, v) for c, v in zip(columns, values, strict=True))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if ev.baseline is not None:
        lines += ["", f"Against `{ev.baseline['path']}`:", "",
                  "| metric | baseline | current | delta |", "|---|---:|---:|---:|"]
        for name, b, current, delta in comparison(ev):
            lines.append(f"| {name} | {b:.4f} | {current:.4f} | {delta:+.4f} |")
    lines += ["", users_line(ev), "", footer(ev.settings)]
    return "\n".join(lines) + "\n"




def append_step_summary(ev, environ=os.environ) -> str | None:
    """Append the Markdown summary to the file named by GITHUB_STEP_SUMMARY, if it is set."""
    path = environ.get(STEP_SUMMARY)
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(render(ev) + "\n")
    return path


def render_compare(result) -> str:
    lines = ["| run | " + " | ".join(result.metrics) + " |",
             "|---|" + "---:|" * len(result.metrics)]
    for r in result.runs:
        cells = [compare_cell(result, r.name, m)[0] for m in result.metrics]
        name = f"{r.name} (baseline)" if r.name == result.baseline else r.name
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", *compare_footer(result)]
    return "\n".join(lines) + "\n"


