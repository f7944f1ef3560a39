"""Sections as bare HTML for notebooks (``_repr_html_`` of an evaluation or a comparison):
tables and notes only, so that Jupyter's own styles apply and nothing heavy is imported."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the type only: this module loads nothing of the report's models
    from rankeval.report.blocks import Section


def render(parts: list[Section]) -> str:
    """Each section's title, table and notes; the notes of every section together below."""
    body: list[str] = []
    notes: list[str] = []
    for s in parts:
        if s.title:
            body.append(f"<p><strong>{html.escape(s.heading())}</strong></p>")
        if s.head:
            head = "".join(f"<th>{html.escape(h)}</th>" for h in s.head)
            rows = "".join(  # the first cell names the row
                f"<tr><th>{html.escape(row[0].strip())}</th>"
                + "".join(f"<td>{html.escape(x.strip())}</td>" for x in row[1:]) + "</tr>"
                for row in s.rows)
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        notes += s.notes
    small = "<br>".join(html.escape(n) for n in notes)
    return "".join(body) + (f"<p><small>{small}</small></p>" if notes else "")
