"""``rankeval convert``: predictions or truth between the supported formats."""

from __future__ import annotations

import click

from rankeval.cli.app import cli, show_notices
from rankeval.cli.options import Command, column_options, option, setting_option
from rankeval.conventions import TIE_ORDERS
from rankeval.errors import plural
from rankeval.settings import ROWS


@cli.command(cls=Command)
@click.argument("source", metavar="IN")
@click.argument("target", metavar="OUT")
@click.option(
    "--kind",
    type=click.Choice(["predictions", "truth"], case_sensitive=False),
    help="What IN holds (default: from the name, .run/.qrels, or the columns: a relevance "
    "column means truth).",
)
@option("input_format")
@option("output_format")
@click.option("--tag", default="rankeval", show_default=True,
              help="Run tag, the last field of each line of a TREC run.")
@click.option("--ties", type=click.Choice(TIE_ORDERS, case_sensitive=False),
              help="The order written for tied scores: item id descending as trec_eval "
              "(trec), item id ascending (item-asc), the file's order (input), or as ranx's "
              "Run orders them (ranx; needs numba). Default "
              "trec. A reader of TREC runs orders tied scores its own way: rankeval with its "
              "--ties, trec_eval by item id descending.")
@setting_option("dedupe")
@(lambda f: column_options(f, roles=("predictions", "truth")))
@option("delimiter")
@option("decimal")
@option("encoding")
@option("quiet", help="Do not print the summary line or warnings.")
@option("debug")
def convert(source, target, kind, input_format, output_format, tag, ties, dedupe, delimiter,
            decimal, encoding, quiet, debug, **cols) -> int:
    """Convert predictions or truth between CSV, TSV, Parquet, TREC, JSON and JSON Lines.

    Every row is kept. Formats come from the extensions (.csv .tsv .parquet .run .trec .qrels
    .json .jsonl, optionally .gz). A TREC run is written in ranking order; when the input has
    no scores, each row gets score = 1/rank so that the order survives.

    \b
    Examples:
      rankeval convert preds.csv preds.run
      rankeval convert truth.csv truth.qrels
      rankeval convert run.trec run.parquet --kind predictions
      rankeval convert qrels.json qrels.csv --kind truth
      cat preds.tsv | rankeval convert - - --input-format tsv --output-format trec \\
          --kind predictions > preds.run
    """
    from rankeval.api.convert import convert as run_convert  # --help's import cost: pyarrow

    done = run_convert(source, target, kind=kind.lower() if kind else None,
                       input_format=input_format, output_format=output_format, tag=tag,
                       ties=(ties or ROWS["ties"].default).lower(), dedupe=bool(dedupe),
                       reading={"delimiter": delimiter, "decimal": decimal,
                                "encoding": encoding}, **cols)
    show_notices(done.notices, quiet)
    if not quiet:
        click.echo(
            f"rankeval: wrote {plural(done.rows, 'row')} of {done.kind} "
            f"({done.source_format} -> "
            f"{done.target_format}) to {'standard output' if target == '-' else target}",
            err=True,
        )
    return 0
