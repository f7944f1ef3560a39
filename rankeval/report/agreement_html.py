"""``rankeval agree`` as HTML (``-f html``, ``--html``): the sections of the table report,
the confusion matrix drawn as a heat table. Apart from ``report.agreement`` so that the
table, JSON and CSV reports load no HTML (nor matplotlib, which the HTML page's figures
need)."""

from __future__ import annotations

import re

from rankeval.report.agreement import grade_text, sections
from rankeval.report.html_page import UNDEFINED as HTML_UNDEFINED
from rankeval.report.html_page import notices_section, section, section_table, text


def html_sections(result) -> list[str]:
    """``rankeval agree`` as a page's sections: the confusion matrix as a heat table (each
    cell shaded by its share of the human grade's row, the agreeing diagonal outlined), then
    every other section's table with its notes, the orderings among them, and the
    warnings."""
    parts = sections(result, HTML_UNDEFINED)
    out = []
    for s in parts:
        body = (_heat(result) if s.key == "confusion" else section_table(s) if s.head
                else "")
        notes = "".join(f'<p class="note">{text(n)}</p>' for n in s.notes)
        sid = "agree-" + re.sub(r"[^a-z0-9]+", "-", s.key.lower()).strip("-")
        out.append(section(sid, s.heading(), body + notes))
    out.append(notices_section([n.message for n in result.notices]))
    return out


def _heat(result) -> str:
    """The confusion matrix: a cell's shade is its share of its row (the pairs of that human
    grade the machine gave each grade); the diagonal, where the two agree, outlined."""
    lab = result.labels
    grades = [grade_text(g) for g in lab.grades]
    head = "".join(f"<th>{text(g)}</th>" for g in ["human \\ machine", *grades, "total"])
    rows = []
    for i, (g, row) in enumerate(zip(grades, lab.confusion, strict=True)):
        total = int(row.sum())
        cells = []
        for j, v in enumerate(row):
            share = v / total if total else 0.0
            edge = "outline:2px solid #333;outline-offset:-2px;" if i == j else ""
            cells.append(f'<td class="heat" title="{share:.1%} of human grade {text(g)}" '
                         f'style="background:rgba(31,119,180,{share:.3f});{edge}">'
                         f"{int(v):,}</td>")
        rows.append(f'<tr><th class="text">{text(g)}</th>{"".join(cells)}<td>{total:,}</td>'
                    "</tr>")
    column = lab.confusion.sum(axis=0)
    rows.append('<tr><th class="text">total</th>' + "".join(f"<td>{int(v):,}</td>"
                                                            for v in column)
                + f"<td>{int(lab.confusion.sum()):,}</td></tr>")
    return (f'<div class="scroll"><table id="confusion-heat"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')
