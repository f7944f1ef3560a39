"""HTML: one self-contained, static page (``-f html -o report.html``, ``--html FILE``).

No script, no request: styles inline, charts as inline SVG (``charts``, from aggregates made
in ``figures``), so the page opens offline from a CI artifact and stays small for any number
of users. Light and dark styles follow ``prefers-color-scheme``; print is light. Every section
appears only when it applies; each has a stable element id (tests and links rely on them).
"""

from __future__ import annotations

import re
from pathlib import Path

from rankeval.dependencies import install_hint
from rankeval.errors import OptionError, plural
from rankeval.report import charts, figures
from rankeval.report import sections as model
from rankeval.report.agreement_html import html_sections as agree_html
from rankeval.report.blocks import Section
from rankeval.report.compare_html import compare_sections
from rankeval.report.gold import html_section as gold_section
from rankeval.report.html_page import (
    CSS,
    LONG_ROWS,
    UNDEFINED,
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
from rankeval.report.interleaving import bars, trajectory_svg
from rankeval.report.interleaving import sections as interleave_sections
from rankeval.report.offpolicy import sections as ope_sections
from rankeval.report.sampled import sections as sampled_sections
from rankeval.version import __version__


def page(title: str, lead: str, sections: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="rankeval {__version__}">'
            f"<title>{text(title)}</title><style>{CSS}</style></head><body>"
            f"<header id=\"top\"><h1>{text(title)}</h1><p>{lead}</p></header>"
            + "".join(s for s in sections if s) + "</body></html>\n")


def check_available() -> None:
    """Before any input is read: the plotting library is installed."""
    if not charts.available():
        raise OptionError("the HTML report draws its charts with matplotlib: "
                          f"{install_hint('report')}, or pip install matplotlib")


def render(ev) -> str:
    """The score report as one HTML page."""
    check_available()
    run = ev.inputs["predictions"].path
    view = figures.View.of_evaluation(ev, Path(run).name if run != "-" else "stdin")
    lead = (f"<code>{text(run)}</code> against <code>{text(ev.inputs['truth'].path)}</code> · "
            f"{plural(ev.users.evaluated, 'user')} evaluated · rankeval {__version__}")
    # the verdict and the headline numbers first, then the charts; a long table (a K range,
    # many metrics) goes below them, folded
    long = _long(ev)
    parts = {s.key: s for s in model.score(ev, UNDEFINED)}
    sections = [
        _gates(parts.get("gates")), _headline(ev) if long else _summary(ev, parts),
        gold_section(ev, parts),
        charts_section("curves", view), distributions_section(view, parts.get("distribution")),
        _segments_score(ev, parts), _fairness(ev, parts), charts_section("popularity", view),
        _summary(ev, parts, folded=True) if long else "", _ties(parts.get("ties")),
        notices_section([n.message for n in ev.notices]),
        conventions_section(ev.settings, [model.users_line(ev)], _inputs(ev), model.run_order(ev)),
    ]
    return page(f"rankeval: {view.runs[0]}", lead, sections)


def _long(ev) -> bool:
    columns, rows = ev.summary_rows()
    return len(columns) > 3 or len(rows) > LONG_ROWS


def _headline(ev) -> str:
    """Each metric at its headline cut-off (10 when asked, else the deepest)."""
    specs = figures.headline(ev.specs)
    rows = [[str(s), model.with_ci(ev, str(s), s.column, ev.metrics[str(s)], UNDEFINED)]
            for s in specs]
    return section("headline", "At a glance", table(["metric", "mean"], rows),
                   "Each metric at one cut-off (10 when asked, else the deepest); every "
                   "cut-off is in the full table below the charts.")


def _gates(gates: Section | None) -> str:
    if gates is None:
        return ""
    banner = (f'<p class="banner">✓ {text(gates.heading())}</p>' if gates.passed
              else f'<p class="banner failed">✗ {text(gates.heading())}</p>')
    return section("gates", "Gates", banner + section_table(gates))


def _summary(ev, parts: dict[str, Section], folded: bool = False) -> str:
    summary = parts["summary"]
    rows, columns = summary.rows, summary.head[1:]
    if len(columns) > max(8, len(rows)):  # a long K range reads down the page, not across
        body = table(["K", *(row[0] for row in rows)],
                     [[c, *(row[j + 1] for row in rows)] for j, c in enumerate(columns)])
    else:
        body = section_table(summary)
    intro = "Means over the evaluated users"
    if ev.intervals:
        intro += f", with {ev.interval_level:.0%} bootstrap confidence intervals"
    if ev.corpus:
        names = dict.fromkeys(s.name for s in ev.specs if str(s) in ev.corpus)
        intro += ("; corpus-level metrics (" + ", ".join(map(text, names))
                  + ") are one value for the whole run")
    if "baseline" in parts:
        base = parts["baseline"]
        body += f"<h3>{base.heading(text)}</h3>" + section_table(base)
    if folded:
        body = fold_away(f"every metric at every cut-off ({plural(len(rows), 'metric')} x "
                         f"{plural(len(columns), 'cut-off')})", body)
    return section("summary", "Summary", body, intro + ".")


def _segments_score(ev, parts: dict[str, Section]) -> str:
    if not ev.segments:
        return ""
    body = ""
    for column, segs in ev.segments.items():
        if not segs:
            continue
        metrics = list(segs[0].metrics)
        shown = [str(s) for s in figures.headline([s for s in ev.specs
                                                   if str(s) in metrics])]
        labels, users = [s.value for s in segs], [s.users for s in segs]
        items = [figures.segment_bars(column, labels, users, m,
                                      [[s.metrics[m]] for s in segs], [m]) for m in shown]
        body += (f"<h3>By {text(column)}</h3>" + charts_grid(items)
                 + section_table(parts[f"segment:{column}"]))
    return section("segments", "Segments", body,
                   "Every per-user metric averaged within each segment; users absent from "
                   "the segment file form the (missing) segment.")


def _fairness(ev, parts: dict[str, Section]) -> str:
    """Exposure by item group against its target (awrf), and the largest gaps between user
    segments."""
    def block(s: Section, charts: str = "") -> str:
        notes = "".join(f'<p class="note">{text(n)}</p>' for n in s.notes)
        return f"<h3>{text(s.heading())}</h3>{charts}{section_table(s)}{notes}"

    body = "".join(block(parts[f"exposure:{metric}"],
                         charts_grid([figures.group_exposure(metric, totals.rows())]))
                   for metric, totals in ev.group_exposure.items())
    body += "".join(block(parts[f"gaps:{column}"]) for column in ev.gaps)
    if not body:
        return ""
    return section("fairness", "Fair exposure", body,
                   "Who gets seen: each item group's share of the lists' attention against "
                   "its target, and the largest gap of each metric between user segments.")


def _ties(ties: Section | None) -> str:
    if ties is None:
        return ""
    body = section_table(ties) if ties.head else ""
    return section("ties", "Tied scores", body + "".join(
        f'<p class="note">{text(note)}</p>' for note in ties.notes))


def _inputs(ev) -> str:
    rows = [[role, s.path, s.format, f"{s.rows:,}", f"{s.users:,}" if s.users else ""]
            for role, s in ev.inputs.items()]
    return table(["input", "path", "format", "rows", "users"], rows)


def render_compare(result) -> str:
    """The compare report as one HTML page."""
    check_available()
    names = ", ".join(r.name for r in result.runs)
    lead = (f"{plural(len(result.runs), 'run')} ({text(names)}) against "
            f"<code>{text(result.options['truth'])}</code> · "
            f"{'baseline' if len(result.baselines) == 1 else 'baselines'} "
            + ", ".join(f"<strong>{text(b)}</strong>" for b in result.baselines)
            + f" · {plural(len(result.shared_users), 'user')} "
            f"compared · rankeval {__version__}")
    return page("rankeval: compare " + " vs ".join(r.name for r in result.runs), lead,
                compare_sections(result))


def render_power(result) -> str:
    """The power analysis as one HTML page (a table; no chart)."""
    power, *about = model.power(result)  # the table, then the config file's line if any
    lead = f"{text(result.runs[1])} against {text(result.runs[0])} · rankeval {__version__}"
    notes = notices_section(list(result.notices))
    return page("rankeval: power", lead, [
        section("power", "Power and sample size", section_table(power),
                text(" ".join([*power.notes, *(n for s in about for n in s.notes)]))), notes])


def render_ope(result) -> str:
    """``rankeval ope`` as one HTML page: the gates, each run's estimates and weights, the
    differences (tables; no chart)."""
    lead = (f"{plural(result.log['slates'], 'slate')} of {text(result.log['path'])} · rankeval "
            f"{__version__}")
    return _tables_page("rankeval: ope", lead, ope_sections(result))


def render_sampled(result) -> str:
    """``rankeval sampled`` as one HTML page (tables; no chart)."""
    lead = (f"{result.negatives:,} sampled negatives among {result.candidates_text()} "
            f"· rankeval {__version__}")
    return _tables_page("rankeval: sampled", lead, sampled_sections(result))


def render_agree(result) -> str:
    """``rankeval agree`` as one HTML page: the pairs, the confusion matrix as a heat table,
    the label agreement, and with runs the orderings, each metric's runs and its swaps."""
    check_available()
    lead = (f"<code>{text(result.machine.label)}</code> against "
            f"<code>{text(result.human.label)}</code> · "
            f"{plural(result.coverage.pairs_both, 'pair')} both judged"
            + (f" · {plural(len(result.runs), 'run')}" if result.runs else "")
            + f" · rankeval {__version__}")
    return page("rankeval: agree", lead, agree_html(result))


def _notes(s: Section) -> str:
    """A section's notes, each on a line of its own (joined by spaces, one ran into the
    next: "... seed 1 click model cascade: ...")."""
    return "<br>".join(text(n) for n in s.notes)


def _tables_page(title: str, lead: str, parts: list[Section]) -> str:
    """Report sections as a page: one section of the page per table, its notes above it."""
    return page(title, lead, [
        section(f"s{i}-" + re.sub(r"[^a-z0-9]+", "-", s.key.lower()).strip("-"),
                s.heading(), section_table(s) if s.head else "", _notes(s))
        for i, s in enumerate(parts)])


def render_interleave(result) -> str:
    """``rankeval interleave`` as one HTML page: the gates, then per pair the win/tie/loss
    bar and Delta with its interval, then the tables."""
    parts = interleave_sections(result)
    if result.to_dict()["kind"] == "interleave_simulation":
        lead = (f"{result.trials:,} simulated trials of {result.impressions:,} impressions "
                f"· rankeval {__version__}")
        return _tables_page("rankeval: interleave simulate", lead, parts)
    lead = (f"{result.log['impressions']:,} impressions of {text(result.log['path'])} · "
            f"rankeval {__version__}")
    figures_html = "".join(f"<figure>{svg}<figcaption>{caption}</figcaption></figure>"
                           for caption, svg in bars(result))
    gates = [s for s in parts if s.key == "gates"]
    rest = [s for s in parts if s.key != "gates"]
    grown = trajectory_svg(result)
    if grown:
        pair = result.pairs[0]
        figures_html += (f"<figure>{grown}<figcaption>Delta of {text(pair.a)} over "
                         f"{text(pair.b)} and its interval over the first n impressions of "
                         "the log (in the order they came)</figcaption></figure>")
    return page("rankeval: interleave score", lead, [
        *(section("gates", s.heading(), section_table(s)) for s in gates),
        section("bars", "Wins, ties and losses; Delta with its interval",
                f'<div class="grid">{figures_html}</div>'),
        *(section(f"s-{s.key}", s.heading(), section_table(s) if s.head else "", _notes(s))
          for s in rest)])
