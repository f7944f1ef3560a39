"""``rankeval validate``: every problem of both inputs, without scoring."""

from __future__ import annotations

import click
from click.core import ParameterSource

from rankeval.cli.app import cli, flag
from rankeval.cli.emit import emit
from rankeval.cli.options import (
    Command,
    engine_options,
    pop_columns,
    pop_engine,
    pop_extras,
    pop_reading,
    pop_settings,
    report_options,
    scoring_options,
)
from rankeval.errors import EXIT_USAGE, plural


@cli.command(cls=Command)
@click.argument("predictions", metavar="PREDS")
@click.argument("truth", metavar="TRUTH")
@scoring_options()
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
    from rankeval.engines import Job
    from rankeval.io.output import check_distinct, check_writable
    from rankeval.io.validate import ANSWERS
    from rankeval.report.numbers import dumps
    from rankeval.settings import make_settings

    check_writable(kw["output"], "--output")
    check_distinct({"--output": kw["output"]},
                   [predictions, truth, *(kw[n] for n in ("train", "catalog", "item_features")
                                           if kw[n])])
    ctx = click.get_current_context()
    acknowledged = frozenset(code for name, code in ANSWERS.items()
                             if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE)
    columns, reading, extra = pop_columns(kw), pop_reading(kw), pop_extras(kw)
    engine, options = pop_engine(kw)
    settings = make_settings(list(kw["metrics"]) or None, list(kw["k"]) or None,
                             compat=kw["compat"], **pop_settings(kw))
    job = Job(predictions, truth, settings, columns, reading, kw["preds_format"],
              kw["truth_format"], extra, options)
    engine.check(job)
    result = engine.validate(job, acknowledged)
    fmt = kw["fmt"].lower()
    emit(kw["output"], fmt, lambda c: c.file.write(_text(result, strict)),
         lambda: dumps(result.to_dict(strict)))
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


def _text(result, strict: bool) -> str:
    lines = []
    for role, info in result.inputs.items():
        cols = ", ".join(f"{r} {c!r}" for r, c in info["columns"].items())
        users = f", {info['users']:,} users" if "users" in info else ""
        lines.append(f"{role}: {info['path']} ({info['format']}): {info['rows']:,} rows{users}; "
                     f"columns: {cols}")
    if result.users is not None:
        u = result.users
        lines.append(
            f"users: {u.evaluated:,} can be evaluated · {u.in_truth:,} in truth · "
            f"{u.in_predictions:,} in predictions · {u.without_relevant:,} without relevant "
            f"items · {u.without_predictions:,} without predictions · "
            f"{u.only_in_predictions:,} only in predictions"
        )
        lines.append(f"prediction rows beyond the largest K: {result.rows_beyond_k:,}")
    lines += [f"{'error' if strict and n.code not in result.acknowledged else 'warning'}: "
              f"{n.render(flag)}" for n in result.notices]
    lines += [f"error: {e.render(flag)}" for e in result.errors]
    return "\n".join(lines) + "\n"
