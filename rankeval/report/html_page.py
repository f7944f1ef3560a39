"""The pieces of rankeval's HTML pages: the style sheet, escaped text, tables, sections,
chart grids, the sections of charts alone (``CHARTS``, a row each: curves, popularity, the
compare page's per-user differences) and the other sections the score and compare pages share
(distributions, notices, conventions). ``html`` assembles the pages from them,
``compare_html`` the compare page's own sections."""

from __future__ import annotations

import html
import re

from rankeval.report import figures, visible
from rankeval.report.blocks import Section
from rankeval.settings import Settings, footer

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
th, td { padding: .2rem .5rem; border-bottom: 1px solid var(--grid); text-align: right;
  white-space: nowrap; }
th, td.text, td.wrap { white-space: normal; }
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

_TAG = re.compile(r"<[^>]+>")
_NUMBER = re.compile(r"^(<[^>]+>)*[-+]?[\d.,\[\]\s%+/e*?-]*(</[^>]+>)?$")


def text(value: object) -> str:
    """Data (ids, names, paths) as HTML text: escaped, control characters made visible."""
    return html.escape(visible(value))


def table(head: list[str], rows: list[list[str]], raw: bool = False) -> str:
    """A table of text cells (escaped unless ``raw``: cells already HTML); numbers right,
    words left, each header over its column's first cell. A wide table wraps to the page
    (or scrolls when it cannot): headers and words at their spaces, numbers only at theirs
    (an interval after its comma; 1.2e-05 never at its minus)."""
    cell = (lambda x: x) if raw else text

    def kind(x) -> str:
        if not _NUMBER.match(str(x)):
            return " class=text"
        return " class=wrap" if " " in _TAG.sub("", str(x)).strip() else ""

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


LONG_ROWS = 12  # a table longer than this (or wider than 3 cut-offs) is folded below the charts


def fold_away(summary: str, body: str) -> str:
    """A long table, folded: a click opens it (no script: HTML's own details element)."""
    return f"<details><summary>{text(summary)}</summary>{body}</details>"


# The sections that are charts alone, a row each: id -> (title, the figures of the page's
# subject, a view or a comparison, and what they show)
CHARTS = {
    "curves": ("Metrics by cut-off", figures.curves,
               "How each metric grows with K, one line per run."),
    "differences": ("Per-user differences", figures.differences,
                    "The same users under both runs: how many gain, how many lose and by how "
                    "much (one cut-off per metric: 10 when asked, else the deepest)."),
    "popularity": ("Popularity bias", figures.popularity,
                   "Whether recommendations concentrate on popular items: the further a curve "
                   "from the diagonal, the more exposure a few items take."),
}


def charts_section(sid: str, subject) -> str:
    """The chart section ``sid`` of ``CHARTS``, drawn of ``subject`` (or nothing to draw)."""
    title, draw, intro = CHARTS[sid]
    return chart_section(sid, title, draw(subject), intro)


def distributions_section(view, shape: Section | None = None) -> str:
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


def notices_section(messages: list[str]) -> str:
    if not messages:
        return ""
    items = "".join(f"<li>{text(m)}</li>" for m in messages)
    return section("notices", "Notices", f"<ul>{items}</ul>")


def conventions_section(settings: Settings, lines: list[str], inputs: str,
                        order: str | None = None) -> str:
    """The settings (``order``: what ordered the lists, as ``settings.footer`` takes it),
    ``lines`` of notes, and the inputs."""
    parts = footer(settings, order).removeprefix("settings: ").split(" · ")
    items = "".join(f"<li>{text(p)}</li>" for p in parts)
    notes = "".join(f'<p class="note">{text(line)}</p>' for line in lines)
    return section("conventions", "Conventions and inputs",
                   f"<ul>{items}</ul>{notes}{inputs}",
                   "The settings that shaped these numbers (rankeval's settings table; the "
                   "JSON report has them all).")
