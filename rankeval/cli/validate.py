"""``rankeval validate``: every problem of both inputs, without scoring."""

from __future__ import annotations

import click
from click.core import ParameterSource

from rankeval.cli.app import cli
from rankeval.cli.emit import emit
from rankeval.cli.options import (
    Command,
    engine_options,
    pop_options,
    report_options,
    scored_inputs,
)
from rankeval.errors import EXIT_USAGE, plural
from rankeval.io.columns import EXTRA
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable
from rankeval.notices import ANSWERS


@cli.command(cls=Command)
@scored_inputs
@click.option("--strict", is_flag=True, help="Warnings fail the check too (exit 2).")
@engine_options
@report_options("validate")
def validate(predictions, truth, strict, **kw) -> int:
    """Check PREDS and TRUTH without scoring: every problem, every count, every warning.

    Exit 0 when `rankeval score` can score the files (warnings allowed unless --strict),
    2 when it cannot. The report goes to stdout; the verdict line to stderr.

    \b
    Examples:
      rankeval validate preds.csv truth.csv
      rankeval validate run.trec qrels.txt --truth-format qrels --strict
      rankeval validate preds.parquet truth.parquet -f json | jq .errors
      rankeval validate --engine spark hdfs:///recs/preds/ hdfs:///recs/truth/
    """
    from rankeval.api.request import request  # --help's import cost: numpy, pyarrow
    from rankeval.api.validate import validate as run_validate  # --help's import cost: numpy

    check_writable(kw["output"], "--output")
    check_distinct({"--output": kw["output"]},
                   [predictions, truth, *(kw[n] for n in EXTRA
                                           if kw[n])])
    ctx = click.get_current_context()
    acknowledged = frozenset(code for name, code in ANSWERS.items()
                             if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE)
    # the inputs' problems, the metrics' extra inputs among them, are the report's
    made = request(predictions, truth, list(kw.pop("metrics")) or None,
                   list(kw.pop("k")) or None, pop_options(kw), engine=kw.pop("engine"),
                   reading=Reading.take(kw), checks={})
    result = run_validate(made, acknowledged)
    fmt = kw["fmt"].lower()
    emit(kw["output"], fmt, "validate", result, strict=strict)
    if result.ok(strict):
        if not kw["quiet"]:
            click.echo("rankeval: ok: the inputs can be scored "
                       f"({plural(len(result.notices), 'warning')})", err=True)
        return 0
    if result.errors:
        click.echo("rankeval: error: the inputs cannot be scored "
                   f"({plural(len(result.errors), 'problem')})", err=True)
    else:
        click.echo("rankeval: error: the inputs can be scored, but --strict counts "
                   f"{plural(len(result.unacknowledged), 'warning')} as problems", err=True)
    return EXIT_USAGE
