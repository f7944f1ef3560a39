"""``score --gold`` on the HTML page (#48): the chart of the machine-only, gold-only and PPI
estimates side by side with their intervals. The tables for people are ``gold_tables.gold``'s."""

from __future__ import annotations

from rankeval.report import charts
from rankeval.report.blocks import Section
from rankeval.report.html_page import charts_grid, section, section_table, text

ESTIMATES = ("machine", "gold", "ppi")  # drawn side by side, in this order
LABELS = {"machine": "machine only", "gold": "gold only", "ppi": "PPI"}


def html_section(ev, parts: dict[str, Section]) -> str:
    """The gold table, the strata and the plan, and one chart: per metric the three
    estimates side by side with their intervals."""
    if ev.gold is None:
        return ""
    g = ev.gold
    metrics = list(g.metrics)
    body = ""
    if metrics:
        values = [[getattr(g.metrics[m].estimate, w) for w in ESTIMATES] for m in metrics]
        svg = charts.intervals("gold-estimates", "Estimates with their intervals", metrics,
                               [LABELS[w] for w in ESTIMATES], values)
        body += charts_grid([("gold-chart", f"per metric: the machine judgments alone, the "
                              f"gold sample alone and PPI, with {g.level:.0%} intervals",
                              svg)])
    main = parts["gold"]
    body += section_table(main)
    for key in ("gold_strata", "gold_plan"):
        if key in parts:
            body += f"<h3>{text(parts[key].heading())}</h3>" + section_table(parts[key])
    notes = "".join(f'<p class="note">{text(n)}</p>' for n in main.notes)
    return section("gold", main.heading(), body + notes)
