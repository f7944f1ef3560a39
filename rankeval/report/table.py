"""Reports for people in a terminal: the sections of ``report.sections`` as rich tables (score,
compare, power, validate, metrics), and their plain text for ``repr``."""

from __future__ import annotations

import io
from textwrap import fill

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankeval.report import MODELS, catalog, parts, sections, visible
from rankeval.report.blocks import Section


def data(text: object) -> str:
    """Data in rich markup: shown as written, never read as markup or terminal codes."""
    return escape(visible(text))


STYLES = {1: "green", -1: "red"}


def render(ev, console) -> None:
    """Print the evaluation: a table per section (``report.sections``), the gates last."""
    draw_model("score", ev, console)


def draw_model(command: str, result, console) -> None:
    """``command``'s sections (``report.MODELS``); where its model says so, the verdict is
    read last: the gates move to the end."""
    made = parts(command, result)
    if MODELS[command].verdict_last:
        made = ([s for s in made if s.passed is None]
                + [s for s in made if s.passed is not None])
    draw(console, made)


def draw(console, parts: list[Section]) -> None:
    """Each section: a blank line, its title in bold, its table (a one-column table as
    lines), its notes dimmed; a section of notes alone follows the one before it without a
    blank line."""
    for i, s in enumerate(parts):
        if i and (s.head or s.title):
            console.print()
        if s.title:
            style = ("bold" if s.passed is None else "bold green" if s.passed else "bold red")
            console.print(data(s.heading() + (":" if s.passed is None else "")), style=style,
                          highlight=False, soft_wrap=True)
        if len(s.head) == 1:  # a list: a line per row
            for i, (line,) in enumerate(s.rows):
                tone = s.tone(i, 0)
                console.print(data(line), style=STYLES[tone] if tone else None, highlight=False,
                              soft_wrap=True)
        elif s.head:
            console.print(_table(s))
        for note in s.notes:
            console.print(data(note), style="dim", highlight=False, soft_wrap=True)


def _table(s: Section):
    """A section's rich table. Numbers are right-aligned here, not by rich: a difference
    without a mark keeps a space in the mark's place, which rich's right justification would
    strip, and the columns would shift."""
    widths = [max([len(h), *(len(r[j]) for r in s.rows)]) for j, h in enumerate(s.head)]
    table = Table(box=None, header_style="bold", pad_edge=False)
    for j, name in enumerate(s.head):
        shown = name if j in s.left else name.rjust(widths[j])
        table.add_column(data(shown), overflow="fold",
                         style="bold" if s.key == "summary" and j == 0 else None)
    for i, row in enumerate(s.rows):
        cells = []
        for j, text in enumerate(row):
            text = data(text if j in s.left else text.rjust(widths[j]))
            tone = s.tone(i, j)
            if tone:
                style = "bold red" if tone < 0 and s.passed is not None else STYLES[tone]
                text = f"[{style}]{text}[/]"
            cells.append(text)
        table.add_row(*cells)
    return table


def plain_text(ev, how=None) -> str:
    """The table (``how``: the renderer, default ``render``) as plain text, as wide as it
    needs (``repr``)."""
    buffer = io.StringIO()
    (how or render)(ev, Console(file=buffer, width=100_000, color_system=None))
    return buffer.getvalue()


def render_sampled(result, console) -> None:
    draw_model("sampled", result, console)


def render_power(result, console) -> None:
    draw_model("power", result, console)


def render_ope(result, console) -> None:
    draw_model("ope", result, console)


def render_compare(result, console) -> None:
    draw_model("compare", result, console)


def render_metrics(registry, console) -> None:
    """The metric registry (``rankeval metrics``)."""
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in catalog.HEAD:
        table.add_column(column, no_wrap=True)
    for row in catalog.rows(registry):
        table.add_row(*(escape(x) for x in row))
    cells = [catalog.HEAD, *catalog.rows(registry)]
    n = len(catalog.HEAD)
    natural = sum(max(len(r[i]) for r in cells) for i in range(n)) + 2 * (n - 1)
    if natural <= console.width:
        console.print(table)
        return
    # A terminal narrower than the table: a block per metric, wrapped at words to its width,
    # nothing cut (a table squeezed into 80 columns cuts its last columns)
    width = max(console.width, 40)
    out = []
    for name, aliases, summary, formula, took, tie in catalog.rows(registry):
        out.append(fill(name + (f" ({aliases})" if aliases else ""), width))
        for text in (summary, f"per user: {formula}", f"takes: {took}",
                     f"--ties expected: {tie}"):
            out.append(fill(text, width, initial_indent="    ", subsequent_indent="    ",
                            break_long_words=False, break_on_hyphens=False))
    console.file.write("\n".join(out) + "\n")


def render_validation(result, console, strict: bool = False) -> None:
    """``rankeval validate``: its lines as written (not wrapped, not styled)."""
    (part,) = sections.validation(result, strict)
    console.file.write("\n".join(part.notes) + "\n")


def render_agree(result, console) -> None:
    draw_model("agree", result, console)
def render_interleave(result, console) -> None:
    draw_model("interleave", result, console)
