"""``rankeval metrics``: what every metric means, from the registry."""

from __future__ import annotations

import click

from rankeval.cli.app import cli
from rankeval.registry import REGISTRY


@cli.command("metrics")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "json"]),
    default="table",
    show_default=True,
)
def metrics_command(fmt: str) -> int:
    """List every metric: name, aliases, definition, what it takes after the @, and whether
    --ties expected has a closed form for it.

    \b
    In the definitions: the list is cut at K; hit_j is 1 when the item at rank j is relevant;
    rel_j is its relevance (0 if not in the truth); R is the user's number of relevant items.
    """
    from rankeval.cli.emit import emit
    from rankeval.io.formats import STDOUT

    def text() -> str:
        if fmt == "markdown":
            return metrics_markdown()
        from rankeval.report.numbers import dumps

        return dumps([
            {
                "name": m.name,
                "aliases": list(m.aliases),
                "summary": m.summary,
                "formula": m.formula,
                "bounded": m.bounded,
                "takes": _takes(m),
                "overall": m.overall,
                "ties_expected": m.tie_expectation,
                "undefined_when": m.undefined_when or None,
            }
            for m in REGISTRY.values()
        ])

    def draw(console) -> None:
        from rich.table import Table

        table = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("metric", "aliases", "definition", "per user", "takes", "--ties expected"):
            table.add_column(column)
        for m in REGISTRY.values():
            table.add_row(m.name, ", ".join(m.aliases), m.summary, m.formula, _takes(m),
                          _expected(m))
        console.print(table)

    # through the one writer: a full disk or a closed pipe is handled as for every report
    emit(STDOUT, fmt, draw, text)
    return 0


def metrics_markdown() -> str:
    """The metrics table of the README, generated from the registry."""
    lines = ["| metric | aliases | definition | per user | takes | `--ties expected` |",
             "|---|---|---|---|---|---|"]
    for m in REGISTRY.values():
        aliases = ", ".join(f"`{a}`" for a in m.aliases)
        lines.append(f"| `{m.name}` | {aliases} | {m.summary} | `{m.formula}` | {_takes(m)} | "
                     f"{_expected(m)} |")
    return "\n".join(lines) + "\n"


def _takes(m) -> str:
    """What follows the @: a cut-off, a level, or nothing."""
    if m.levels:
        return "level (@0.5)"
    if m.cutoff:
        return "K (@10, @all)"
    return "R" if m.at == "R" else "whole list"


def _expected(m) -> str:
    return "closed form" if m.tie_expectation else "no closed form (refused)"


