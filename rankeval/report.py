"""Evaluation -> text: rich table, JSON, CSV, Markdown, per-user files. Formatting only."""

from __future__ import annotations

import csv
import io
import json
import math

from .evaluation import Evaluation

FORMATS = ("table", "json", "csv", "markdown")


def _fmt(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.4f}"


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
    parts = [f"gain {s.gain}", f"AP / {ap}", f"RR target {s.rr_target}", f"relevant: {relevant}"]
    return "settings: " + " · ".join(parts)


def render_table(ev: Evaluation, console) -> None:
    """Print a rich table: one row per metric, one column per K, counts below."""
    from rich.table import Table

    summary = ev.summary
    table = Table(title=None, box=None, header_style="bold", pad_edge=False)
    table.add_column("metric", style="bold")
    for k in summary.columns:
        table.add_column(f"@{k}", justify="right")
    for name, row in summary.iterrows():
        table.add_row(str(name), *(_fmt(v) for v in row))
    console.print(table)
    console.print(users_line(ev), style="dim", highlight=False, soft_wrap=True)
    console.print(settings_line(ev), style="dim", highlight=False, soft_wrap=True)


def render_json(ev: Evaluation) -> str:
    return json.dumps(ev.to_dict(), indent=2) + "\n"


def render_csv(ev: Evaluation) -> str:
    """One row per metric@K: ``metric,name,k,value`` with full-precision values."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["metric", "name", "k", "value"])
    for spec in ev.specs:
        writer.writerow([str(spec), spec.name, spec.k, repr(ev.metrics[str(spec)])])
    return out.getvalue()


def render_markdown(ev: Evaluation) -> str:
    summary = ev.summary
    lines = [
        "| metric | " + " | ".join(f"@{k}" for k in summary.columns) + " |",
        "|---|" + "---:|" * len(summary.columns),
    ]
    for name, row in summary.iterrows():
        lines.append(f"| {name} | " + " | ".join(_fmt(v) for v in row) + " |")
    lines += ["", users_line(ev), "", settings_line(ev)]
    return "\n".join(lines) + "\n"


def render_text(ev: Evaluation, fmt: str) -> str:
    """JSON, CSV or Markdown as one string (the table is printed by ``render_table``)."""
    return {"json": render_json, "csv": render_csv, "markdown": render_markdown}[fmt](ev)
