"""HTML: one self-contained, static page (``-f html -o report.html``, ``--html FILE``).

No script, no request: styles inline, charts as inline SVG (``charts``, from aggregates made
in ``figures``), so the page opens offline from a CI artifact and stays small for any number
of users. Light and dark styles follow ``prefers-color-scheme``; print is light. Every section
appears only when it applies; each has a stable element id (tests and links rely on them).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from rankeval import __version__
from rankeval.errors import OptionError
from rankeval.report import figures, visible
from rankeval.report import sections as model
from rankeval.report.sections import Section
from rankeval.settings import footer

CSS = """
:root { --fg: #1b1f24; --bg: #ffffff; --muted: #59636e; --grid: #d8dee4; --panel: #f6f8fa;
  --good: #1a7f37; --bad: #cf222e; --accent: #0969da; color-scheme: light dark; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1;
  --grid: #30363d; --panel: #161b22; --good: #3fb950; --bad: #f85149; --accent: #4493f8; } }
@media print { :root { --fg: #000; --bg: #fff; --muted: #444; --grid: #ccc; --panel: #fff;
  --good: #1a7f37; --bad: #cf222e; } section, figure { break-inside: avoid; }
  .scroll { overflow: visible; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 1.5rem; color: var(--fg);
  background: var(--bg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto,
  "DejaVu Sans", sans-serif; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; } h2 { font-size: 1.15rem; margin: 0 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
header p, .note, figcaption { color: var(--muted); }
section { border-top: 1px solid var(--grid); padding: 1rem 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .25rem 0; }
th, td { padding: .2rem .6rem; border-bottom: 1px solid var(--grid); text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child, .text { text-align: left; }
thead th { border-bottom: 2px solid var(--grid); }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(30rem, 1fr));
  gap: 1rem; }
figure { margin: 0; background: var(--panel); border-radius: 6px; padding: .5rem; }
figure svg { width: 100%; height: auto; display: block; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans",
  sans-serif; }
figcaption { font-size: .85rem; padding: .25rem .25rem 0; }
.pass { color: var(--good); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
.banner { font-size: 1.1rem; padding: .5rem .75rem; border-radius: 6px;
  background: var(--panel); border-left: 4px solid var(--good); }
.banner.failed { border-left-color: var(--bad); }
code { font-size: .9em; }
ul { margin: .25rem 0; padding-left: 1.25rem; }
"""


UNDEFINED = "undefined"  # how the page shows an undefined value (SPEC section 9)

_NUMBER = re.compile(r"^(<[^>]+>)*[-+]?[\d.,\[\]\s%+/e*?-]*(</[^>]+>)?$")


def text(value: object) -> str:
    """Data (ids, names, paths) as HTML text: escaped, control characters made visible."""
    return html.escape(visible(value))


def table(head: list[str], rows: list[list[str]], raw: bool = False) -> str:
    """A table of text cells (escaped unless ``raw``: cells already HTML); numbers right,
    words left, each header over its column's first cell."""
    cell = (lambda x: x) if raw else text

    def kind(x) -> str:
        return "" if _NUMBER.match(str(x)) else " class=text"

    first = rows[0] if rows else []
    top = "".join(f"<th{kind(first[i]) if i < len(first) else ''}>{text(h)}</th>"
                  for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f"<td{kind(x)}>{cell(x)}</td>" for x in row) + "</tr>"
                   for row in rows)
    return f'<div class="scroll"><table><thead><tr>{top}</tr></thead><tbody>{body}</tbody>' \
           "</table></div>"


def section_table(s: Section) -> str:
    """A section's table, every cell escaped; a toned cell coloured, a verdict with its
    glyph."""
    def shown(i: int, j: int, x: str) -> str:
        tone = s.tone(i, j)
        if not tone:
            return text(x)
        glyph = ("✓ " if tone > 0 else "✗ ") if s.passed is not None else ""
        return f'<span class="{"pass" if tone > 0 else "fail"}">{glyph}{text(x)}</span>'

    return table(list(s.head), [[shown(i, j, x) for j, x in enumerate(row)]
                                for i, row in enumerate(s.rows)], raw=True)


def section(sid: str, title: str, body: str, intro: str = "") -> str:
    lead = f'<p class="note">{intro}</p>' if intro else ""
    return f'<section id="{sid}"><h2>{text(title)}</h2>{lead}{body}</section>'


def chart_section(sid: str, title: str, items: list[tuple[str, str, str]], intro: str) -> str:
    """A section of charts, or nothing when there is none to draw."""
    return section(sid, title, charts_grid(items), intro) if items else ""


def charts_grid(items: list[tuple[str, str, str]]) -> str:
    return '<div class="grid">' + "".join(
        f'<figure id="{cid}">{svg}<figcaption>{text(caption)}</figcaption></figure>'
        for cid, caption, svg in items) + "</div>"


def page(title: str, lead: str, sections: list[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="rankeval {__version__}">'
            f"<title>{text(title)}</title><style>{CSS}</style></head><body>"
            f"<header id=\"top\"><h1>{text(title)}</h1><p>{lead}</p></header>"
            + "".join(s for s in sections if s) + "</body></html>\n")


def check_available() -> None:
    """Before any input is read: the plotting library is installed."""
    from rankeval.report import charts

    if not charts.available():
        raise OptionError("the HTML report draws its charts with matplotlib: "
                          "pip install 'rankeval[report]' (or matplotlib)")


def render(ev) -> str:
    """The score report as one HTML page."""
    check_available()
    run = ev.inputs["predictions"].path
    view = figures.View.of_evaluation(ev, Path(run).name if run != "-" else "stdin")
    lead = (f"<code>{text(run)}</code> against <code>{text(ev.inputs['truth'].path)}</code> · "
            f"{ev.users.evaluated:,} users evaluated · rankeval {__version__}")
    # the verdict and the headline numbers first, then the charts; a long table (a K range,
    # many metrics) goes below them, folded
    long = _long(ev)
    parts = {s.key: s for s in model.score(ev, UNDEFINED)}
    sections = [
        _gates(parts.get("gates")), _headline(ev) if long else _summary(ev, parts),
        _curves(view), _distributions(view, parts.get("distribution")),
        _segments_score(ev, parts), _fairness(ev, parts), _popularity(view),
        _summary(ev, parts, folded=True) if long else "", _ties(parts.get("ties")),
        _notices([n.message for n in ev.notices]),
        _conventions(ev.settings, [model.users_line(ev)], _inputs(ev)),
    ]
    return page(f"rankeval: {view.runs[0]}", lead, sections)


LONG_ROWS = 12  # a table longer than this (or wider than 3 cut-offs) is folded below the charts


def _long(ev) -> bool:
    columns, rows = ev.summary_rows()
    return len(columns) > 3 or len(rows) > LONG_ROWS


def fold_away(summary: str, body: str) -> str:
    """A long table, folded: a click opens it (no script: HTML's own details element)."""
    return f"<details><summary>{text(summary)}</summary>{body}</details>"


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
        body = fold_away(f"every metric at every cut-off ({len(rows)} metrics x "
                         f"{len(columns)} cut-offs)", body)
    return section("summary", "Summary", body, intro + ".")


def _curves(view) -> str:
    return chart_section("curves", "Metrics by cut-off", figures.curves(view),
                         "How each metric grows with K, one line per run.")


def _distributions(view, shape: Section | None = None) -> str:
    items = figures.distributions(view)
    if not items:
        return ""
    body = charts_grid(items)
    if shape is not None:
        body += section_table(shape)
    return section("distributions", "Distribution over users", body,
                   "The share of users at each value: a mean hides users the model fails "
                   "(at 0) and the spread. One cut-off per metric: 10 when asked, else the "
                   "deepest.")


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


def _popularity(view) -> str:
    return chart_section("popularity", "Popularity bias", figures.popularity(view),
                         "Whether recommendations concentrate on popular items: the further a "
                         "curve from the diagonal, the more exposure a few items take.")


def _ties(ties: Section | None) -> str:
    if ties is None:
        return ""
    body = section_table(ties) if ties.head else ""
    return section("ties", "Tied scores", body + "".join(
        f'<p class="note">{text(note)}</p>' for note in ties.notes))


def _notices(messages: list[str]) -> str:
    if not messages:
        return ""
    items = "".join(f"<li>{text(m)}</li>" for m in messages)
    return section("notices", "Notices", f"<ul>{items}</ul>")


def _conventions(settings, lines: list[str], inputs: str) -> str:
    parts = footer(settings).removeprefix("settings: ").split(" · ")
    items = "".join(f"<li>{text(p)}</li>" for p in parts)
    notes = "".join(f'<p class="note">{text(line)}</p>' for line in lines)
    return section("conventions", "Conventions and inputs",
                   f"<ul>{items}</ul>{notes}{inputs}",
                   "The settings that shaped these numbers (rankeval's settings table; the "
                   "JSON report has them all).")


def _inputs(ev) -> str:
    rows = [[role, s.path, s.format, f"{s.rows:,}", f"{s.users:,}" if s.users else ""]
            for role, s in ev.inputs.items()]
    return table(["input", "path", "format", "rows", "users"], rows)


def render_compare(result) -> str:
    """The compare report as one HTML page."""
    from rankeval.report.compare_html import compare_sections

    check_available()
    names = ", ".join(r.name for r in result.runs)
    lead = (f"{len(result.runs)} runs ({text(names)}) against "
            f"<code>{text(result.options['truth'])}</code> · "
            f"{'baseline' if len(result.baselines) == 1 else 'baselines'} "
            + ", ".join(f"<strong>{text(b)}</strong>" for b in result.baselines)
            + f" · {len(result.shared_users):,} users "
            f"compared · rankeval {__version__}")
    return page("rankeval: compare " + " vs ".join(r.name for r in result.runs), lead,
                compare_sections(result))



def render_power(result) -> str:
    """The power analysis as one HTML page (a table; no chart)."""
    (power,) = model.power(result)
    lead = f"{text(result.runs[1])} against {text(result.runs[0])} · rankeval {__version__}"
    notes = _notices(list(result.notices))
    return page("rankeval: power", lead, [
        section("power", "Power and sample size", section_table(power),
                text(" ".join(power.notes))), notes])


def render_ope(result) -> str:
    """``rankeval ope`` as one HTML page: the gates, each run's estimates and weights, the
    differences (tables; no chart)."""
    from rankeval.report.offpolicy import sections as ope_sections

    lead = (f"{result.log['slates']:,} slates of {text(result.log['path'])} · rankeval "
            f"{__version__}")
    return _tables_page("rankeval: ope", lead, ope_sections(result))


def render_sampled(result) -> str:
    """``rankeval sampled`` as one HTML page (tables; no chart)."""
    from rankeval.report.sampled import sections as sampled_sections

    lead = (f"{result.negatives:,} sampled negatives among {result.candidates:,} candidates "
            f"· rankeval {__version__}")
    return _tables_page("rankeval: sampled", lead, sampled_sections(result))


def _tables_page(title: str, lead: str, parts: list[Section]) -> str:
    """Report sections as a page: one section of the page per table, its notes above it."""
    return page(title, lead, [
        section(f"s{i}-" + re.sub(r"[^a-z0-9]+", "-", s.key.lower()).strip("-"),
                s.heading(), section_table(s) if s.head else "", text(" ".join(s.notes)))
        for i, s in enumerate(parts)])
