"""``rankeval metrics``: what every metric means, from the registry."""

from __future__ import annotations

import click

from rankeval.cli.app import cli
from rankeval.cli.emit import emit
from rankeval.cli.groups import GroupedCommand
from rankeval.io.formats import STDOUT
from rankeval.registry import REGISTRY
from rankeval.report import choices


@cli.command("metrics", cls=GroupedCommand)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(choices("metrics")),
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
    # through the one writer: a full disk or a closed pipe is handled as for every report
    emit(STDOUT, fmt, "metrics", REGISTRY)
    return 0


def metrics_markdown() -> str:
    """The metrics table of the documentation, generated from the registry."""
    from rankeval.report.markdown import render_metrics  # --help's import cost: numpy, pyarrow

    return render_metrics(REGISTRY)
