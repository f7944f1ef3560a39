"""``rankeval metrics [NAME]``: what every metric means, or everything about one, from the
registry."""

from __future__ import annotations

import shutil
import sys

import click

from rankeval.cli.app import GroupedCommand, cli
from rankeval.cli.emit import emit
from rankeval.errors import OptionError
from rankeval.foreign_names import (
    CUT,
    JUDGMENT_GROUPS,
    MEASURE,
    PREFERENCE_DEFINITIONS,
    UNCUT,
)
from rankeval.io.formats import STDOUT
from rankeval.io.output import write_text
from rankeval.names import parse
from rankeval.registry import REGISTRY
from rankeval.report import choices


@cli.command("metrics", cls=GroupedCommand)
@click.argument("name", required=False, metavar="[NAME]")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(choices("metrics")),
    default="table",
    show_default=True,
    help="Report format (with NAME: table or json).",
)
def metrics_command(name: str | None, fmt: str) -> int:
    """List every metric: name, aliases, definition, what it takes after the @, and whether
    --ties expected has a closed form for it. With NAME (any alias, ir_measures' or
    trec_eval's name too): its definition, parameters, the conventions that change it, other
    tools' names for it and an example.

    In the definitions: the list is cut at K; hit_j is 1 when the item at rank j is relevant;
    rel_j is its relevance (0 if not in the truth); R is the user's number of relevant items.

    \b
    Examples:
      rankeval metrics
      rankeval metrics ndcg
      rankeval metrics recip_rank -f json
    """
    if name is None:
        # through the one writer: a full disk or a closed pipe is handled as for every report
        emit(STDOUT, fmt, "metrics", REGISTRY)
        return 0
    from rankeval.report.catalog import (  # --help's import cost
        explain,
        explain_preference,
        explain_text,
    )
    from rankeval.report.numbers import dumps  # --help's import cost: the JSON writer

    if name in PREFERENCE_DEFINITIONS:
        info = explain_preference(name)
    else:
        info = explain(REGISTRY, _metric(JUDGMENT_GROUPS.get(name, name)))
        if name in JUDGMENT_GROUPS:
            info["note"] = (f"{name} is trec_eval's -R qrels_jg measure: {info['name']} "
                            "scored on each judgment group of a user and averaged over them "
                            "(--judgment-groups, with --compat trec_eval)")
    if fmt == "json":
        write_text(STDOUT, dumps(info))
    elif fmt == "table":
        terminal = sys.stdout.isatty()
        write_text(STDOUT, explain_text(info, shutil.get_terminal_size().columns
                                        if terminal else 100))
    else:
        raise OptionError(f"rankeval metrics NAME writes -f table or json, not {fmt}")
    return 0


def _metric(word: str) -> str:
    """The registry name of ``word``: rankeval's names and aliases, ir_measures' and
    trec_eval's measures (``nDCG``, ``recip_rank``, ``P.10``)."""
    try:  # ir_measures' names read (R is recall), not its refusals (R without a cut-off)
        return parse(word)[0]
    except OptionError:
        match = MEASURE.match(word)
        theirs = UNCUT.get(word) or (CUT.get(match.group(1)) if match else None)
        if theirs:
            return theirs.partition("@")[0]
        raise


def metrics_markdown() -> str:
    """The metrics table of the documentation, generated from the registry."""
    from rankeval.report.markdown import render_metrics  # --help's import cost: numpy, pyarrow

    return render_metrics(REGISTRY)
