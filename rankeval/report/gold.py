"""``score --gold`` in the machine formats and on the HTML page (#48): the CSV rows of each
metric's estimates, and the chart of the machine-only, gold-only and PPI estimates side by
side with their intervals. The tables for people are ``sections.gold``'s."""

from __future__ import annotations

from collections.abc import Iterator

from rankeval.report import charts
from rankeval.report.html_page import charts_grid, section, section_table, text
from rankeval.report.sections import Section

ESTIMATES = ("machine", "gold", "ppi")  # drawn side by side, in this order
LABELS = {"machine": "machine only", "gold": "gold only", "ppi": "PPI"}


def csv_rows(gold) -> Iterator[tuple[str, float]]:
    """(row name, value): ``ndcg@10[ppi]``, ``ndcg@10[ppi:low]``, ... ``ndcg@10[lambda]``,
    ``ndcg@10[effective_gold]``, and with --gold-plan ``ndcg@10[plan:ppi]``."""
    for metric, g in gold.metrics.items():
        e = g.estimate
        for what in (*ESTIMATES, "bias"):
            interval = getattr(e, what)
            yield f"{metric}[{what}]", interval.value
            yield f"{metric}[{what}:low]", interval.low
            yield f"{metric}[{what}:high]", interval.high
        yield f"{metric}[lambda]", e.lam
        yield f"{metric}[effective_gold]", e.effective_gold
        yield f"{metric}[gold_queries]", float(e.gold_queries)
        yield f"{metric}[other_queries]", float(e.other_queries)
        for s in e.strata:
            yield f"{metric}[ppi:{s.name}]", s.ppi.value
            yield f"{metric}[lambda:{s.name}]", s.lam
        if g.plan is not None:
            yield f"{metric}[plan:gold_alone]", g.plan[0]
            yield f"{metric}[plan:ppi]", g.plan[1]


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
