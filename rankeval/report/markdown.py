"""Markdown: a compact summary for pull requests and GitHub's step summary, verdict first."""

from __future__ import annotations

import os
import re

from rankeval.io.output import append_bytes
from rankeval.report import catalog, parts, sections, visible
from rankeval.report.blocks import Section, warnings_section

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def render(ev) -> str:
    """A compact summary for pull requests and GITHUB_STEP_SUMMARY: verdict first."""
    return blocks([*sections.score(ev),
                   *warnings_section(n.message for n in ev.notices)])


def blocks(parts: list[Section]) -> str:
    """Sections as Markdown: a verdict in bold with its mark, a title as a line of its own,
    each table (a list when it has one column) and each note a paragraph."""
    lines: list[str] = []
    for s in parts:
        if lines and (s.head or s.title):
            lines.append("")
        if s.passed is not None:
            lines += [f"**rankeval: {cell(s.heading())}** {'✅' if s.passed else '❌'}", ""]
        elif s.title:
            lines += [s.heading(code) + ":", ""]
        if len(s.head) == 1:
            lines += [f"- {_mark(s, i, 0)}{cell(row[0])}" for i, row in enumerate(s.rows)]
        elif s.head:
            lines += _table(s)
        for note in s.notes:
            lines += ["", cell(note)] if lines else [cell(note)]
    return "\n".join(lines) + "\n"


def _mark(s: Section, row: int, column: int) -> str:
    tone = s.tone(row, column)
    return "✅ " if tone > 0 else "❌ " if tone < 0 else ""


def _table(s: Section) -> list[str]:
    """A Markdown table; a verdict column shows as a mark, first."""
    verdict = s.head.index("verdict") if "verdict" in s.head else None
    keep = [j for j in range(len(s.head)) if j != verdict]
    marks = ["| "] if verdict is not None else []
    head = "| " + "".join(marks) + " | ".join(cell(s.head[j]) for j in keep) + " |"
    rule = "|" + ("---|" if marks else "") + "".join(
        "---|" if j in s.left else "---:|" for j in keep)
    rows = []
    for i, row in enumerate(s.rows):
        # data is shown as written; any other cell keeps its markup, but never a bare '|',
        # which would end the cell (a segment value in the gap table's best and worst)
        shown = [cell(row[j]) if j in s.data else _pipes(row[j].rstrip()) for j in keep]
        mark = [_mark(s, i, verdict).strip()] if verdict is not None else []
        rows.append("| " + " | ".join([*mark, *shown]) + " |")
    return [head, rule, *rows]


def append_step_summary(subject, environ=os.environ, command: str = "score") -> str | None:
    """Append the Markdown summary of ``command``'s result to the file named by
    GITHUB_STEP_SUMMARY, if it is set.

    A summary that cannot be written is a warning for the caller (the returned text), never a
    change of verdict: the gates' exit code is what CI reads."""
    path = environ.get(STEP_SUMMARY)
    if not path:
        return None

    text = {"score": render, "compare": render_compare, "ope": render_ope,
            "interleave": render_interleave, "agree": render_agree}[command](subject)
    try:
        append_bytes(path, (text + "\n").encode("utf-8"))
    except OSError as exc:
        return f"cannot append to {STEP_SUMMARY} {path}: {exc.strerror or exc}"
    return None


def _pipes(text: str) -> str:
    """``|`` escaped where it is not already."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def cell(text: object) -> str:
    """Data in a Markdown table cell: shown as written (``|``, backticks, markup escaped)."""
    shown = visible(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return shown.replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def code(text: object) -> str:
    """Data as a Markdown code span, fenced by more backticks than it holds in a row."""
    shown = visible(text)
    run = max((len(r) for r in re.findall("`+", shown)), default=0)
    fence = "`" * (run + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def render_compare(result) -> str:
    return blocks([*sections.compare(result), *warnings_section(
        prefix + n.message for prefix, n in result.said())])


def render_ope(result) -> str:
    return blocks(parts("ope", result))


def render_sampled(result) -> str:
    return blocks(parts("sampled", result))


def render_power(result) -> str:
    return blocks(sections.power(result))


def render_metrics(registry) -> str:
    """The metric registry (``rankeval metrics``; the table of the Metric reference)."""
    lines = ["| metric | aliases | definition | per user | takes | `--ties expected` |",
             "|---|---|---|---|---|---|"]
    for name, _, summary, formula, takes, expected in catalog.rows(registry):
        aliases = ", ".join(f"`{a}`" for a in registry[name].aliases)
        lines.append(f"| `{name}` | {aliases} | {summary} | `{formula}` | {takes} | "
                     f"{expected} |")
    return "\n".join(lines) + "\n"


def render_agree(result) -> str:
    return blocks(parts("agree", result))
def render_interleave(result) -> str:
    return blocks(parts("interleave", result))
