"""``rankeval score``: metrics per user and overall, reports, and quality gates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from rankeval.cli.app import cli, error, show_notices, warn
from rankeval.cli.emit import check_html, emit, step_summary, write_html
from rankeval.cli.options import (
    Command,
    engine_options,
    option,
    pop_engine,
    pop_extras,
    pop_reading,
    pop_settings,
    report_options,
    scoring_options,
)
from rankeval.engines.interface import Breakdown, Inputs, Job
from rankeval.errors import EXIT_GATE_FAILED, OptionError
from rankeval.integrations import mlflow, wandb
from rankeval.integrations.support import IntegrationError
from rankeval.io.options import Columns
from rankeval.report import FORMATS


@cli.command(cls=Command)
@click.argument("predictions", metavar="PREDS")
@click.argument("truth", metavar="TRUTH")
@scoring_options()
@click.option("--per-user", metavar="FILE",
              help="Also write one row per evaluated user: .csv, .parquet, or - for stdout "
              "(with --engine spark or ray: a directory, written as a Parquet dataset).")
@click.option("--per-query", is_flag=True,
              help="With --format trec: a line per user and measure before the 'all' lines "
              "(trec_eval's -q).")
@click.option("--no-summary", is_flag=True,
              help="With --format trec --per-query: the per-user lines alone, without the "
              "'all' lines (trec_eval's -n).")
@click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
              help="Gate: exit 1 when METRIC's mean is below VALUE (repeatable; also "
              "'ndcg@10>=0.35').")
@click.option("--fail-over", multiple=True, metavar="METRIC=VALUE",
              help="Gate: exit 1 when METRIC's mean is above VALUE (repeatable).")
@click.option("--max-gap", multiple=True, metavar="METRIC=VALUE",
              help="Gate with --segments/--segment-by: exit 1 when METRIC's largest gap "
              "between segments (best mean - worst) exceeds VALUE (repeatable).")
@click.option("--baseline", metavar="REPORT.json",
              help="A JSON report of an earlier run (-f json -o FILE) to compare with.")
@click.option("--max-drop", multiple=True, metavar="[METRIC=]DROP[%]",
              help="Gate against --baseline: exit 1 when METRIC falls more than DROP "
              "(absolute, or relative with %); without METRIC, for every metric in both reports.")
@click.option("--allow-settings-change", is_flag=True,
              help="Compare with a --baseline computed with other settings.")
@option("non_inferior", help="Gate against --baseline-per-user: exit 1 unless this run is "
        "shown not worse than the baseline by more than MARGIN (absolute, or % of the "
        "baseline's mean): the one-sided (1 - alpha) lower bound of the paired difference lies "
        "above -MARGIN (repeatable).")
@option("equivalent", help="Gate against --baseline-per-user: exit 1 unless this run is shown "
        "within MARGIN of the baseline either way (two one-sided tests, TOST) (repeatable).")
@click.option("--baseline-per-user", metavar="FILE",
              help="The baseline run's per-user values (its --per-user file), for "
              "--non-inferior and --equivalent: the users are paired by id.")
@option("alpha", help="Significance level of --non-inferior and --equivalent.")
@click.option("--junit", metavar="FILE", help="Also write the gates as JUnit XML test cases.")
@click.option("--mlflow", is_flag=True,
              help="Also log the metrics, settings and reports to MLflow: the active run, or "
              "a new one in MLFLOW_EXPERIMENT_NAME at MLFLOW_TRACKING_URI (default a local "
              "SQLite file); needs rankeval[mlflow].")
@click.option("--wandb", is_flag=True,
              help="Also log the metrics, settings and per-user values to Weights & Biases: "
              "the active run, or a new one in WANDB_PROJECT (offline unless WANDB_MODE or "
              "WANDB_API_KEY says otherwise); needs rankeval[wandb].")
@option("html")
@option("segments")
@option("segment_by")
@option("segment_bins")
@option("stats")
@option("intervals")
@option("confidence")
@option("rounds")
@option("seed")
@engine_options
@report_options("score")
def score(predictions, truth, **kw) -> int:
    """Score PREDS (ranked user-item rows) against TRUTH (user, item, relevance).

    Files are CSV, TSV, TREC run/qrels, JSON, JSON Lines (optionally .gz) or Parquet, chosen by
    extension; - reads standard input.
    Columns are found by name: user_id/user/qid, item_id/item/docno, rank, score, relevance/rating.
    The order of each user's list comes from rank, else score (ties: item id descending, as
    trec_eval), else the file order.

    \b
    Examples:
      rankeval score preds.csv truth.csv --k 10
      rankeval score preds.parquet truth.csv -m ndcg,map,recall --k 5,10,20
      rankeval score preds.csv truth.csv -m ndcg@10 -f json -o report.json
      rankeval score preds.csv truth.csv --k 1..20 --ci --html report.html
      cat preds.tsv | rankeval score - truth.csv --preds-format tsv --per-user users.csv
      rankeval score preds.csv truth.csv --gain exponential --ap-denominator relevant
      rankeval score preds.parquet test.parquet --train train.parquet --exclude-seen \\
          -m ndcg,coverage,gini,novelty,arp,long_tail,personalization
      rankeval score preds.csv truth.csv --fail-under ndcg@10=0.35 --baseline main.json \\
          --max-drop 1% --junit gates.xml
      rankeval score --engine spark s3a://recs/preds/ s3a://recs/truth/ --k 10 \\
          --spark-conf spark.sql.shuffle.partitions=400 --per-user s3a://recs/per_user/

    Exit codes: 0 success, 1 a gate failed (after the full report), 2 usage or input error,
    or --mlflow/--wandb could not log (after the report and the gates' verdicts).
    """
    from rankeval.analysis.gates import plan_gates
    from rankeval.compat import left_out
    from rankeval.engines import run

    # --help's import cost: numpy, pyarrow
    from rankeval.io.extras import check_needs
    from rankeval.io.formats import STDOUT
    from rankeval.settings import make_settings

    fmt, output, per_user, quiet = kw["fmt"].lower(), kw["output"], kw["per_user"], kw["quiet"]
    if kw["no_summary"] and not kw["per_query"]:
        raise OptionError("{opt:no_summary} leaves the per-user lines of {opt:per_query} "
                          "alone: give both, with --format trec or ir_measures")
    if kw["per_query"] and not FORMATS[fmt].per_query:
        raise OptionError("{opt:per_query} adds per-user lines to --format trec and "
                          "ir_measures; for other "
                          "formats use {opt:per_user} FILE")
    columns, reading, extra = Columns.take(kw), pop_reading(kw), pop_extras(kw)
    engine, options = pop_engine(kw)
    settings = make_settings(list(kw["metrics"]) or None, list(kw["k"]) or None,
                             compat=kw["compat"], **pop_settings(kw))
    for message in left_out(kw["metrics"], settings.compat):
        warn(message)
    check_needs(settings, extra.given())
    plan = plan_gates(settings, kw["fail_under"], kw["fail_over"], kw["max_drop"],
                      kw["baseline"], kw["allow_settings_change"], kw["max_gap"],
                      segmented=bool(kw["segments"] and kw["segment_by"]))
    segment_by = _check_breakdowns(kw["stats"], kw["segments"], kw["segment_by"],
                                   kw["segment_bins"])
    margins = _margins(kw, settings)
    job = Job(Inputs(predictions, truth, kw["preds_format"], kw["truth_format"]), settings,
              columns, reading, extra, options,
              Breakdown(kw["stats"], kw["segments"], segment_by, bool(kw["max_gap"])),
              intervals=(kw["confidence"], kw["rounds"], kw["seed"]) if kw["intervals"] else
              None, keep_values=bool(kw["html"] or kw["per_query"] or margins), quiet=quiet)
    engine.check(job)
    _check_outputs(output, per_user, kw["junit"], fmt, job.paths, kw["baseline"], kw["html"],
                   engine)
    trackers = _trackers(kw)

    result = run(engine, job).judged(plan)
    if margins:
        from rankeval.api.score import against_file  # --help's import cost: numpy

        result = result.with_verdicts(against_file(margins, result, kw["baseline_per_user"],
                                                   kw["alpha"]))
    if per_user is not None:
        engine.write_per_user(result, per_user)
    emit(output, fmt, "score", result, to_stderr=output == STDOUT and per_user == STDOUT,
         **({"per_user": True, "summary": not kw["no_summary"]} if kw["per_query"] else {}))
    write_html(kw["html"], "score", result)
    show_notices(result.notices, quiet)  # after the report: data first, then what to mind
    code = _finish_gates(result, kw["junit"], quiet)
    # The verdict is decided and said (FAILED lines, JUnit) before any tracker is called; a
    # tracker's failure then exits 2, over a gate's 1 (docs/integrations.md)
    _log_to(trackers, result, quiet)
    return code


def _trackers(kw) -> dict[str, Callable[[Any], str]]:
    """--mlflow, --wandb: each tracker's logger, imported before any input is read (a
    missing one is a one-line error, not a lost evaluation)."""
    out: dict[str, Callable[[Any], str]] = {}
    if kw["mlflow"]:
        mlflow.require()
        out["MLflow"] = lambda ev: mlflow.log_evaluation(ev)
    if kw["wandb"]:
        wandb.require()
        out["W&B"] = lambda ev: wandb.log_evaluation(ev)
    return out


def _log_to(trackers: dict[str, Callable[[Any], str]], result, quiet: bool) -> None:
    """Each tracker in turn, each failure one line; the last one raised (exit 2)."""
    failed: IntegrationError | None = None
    for name, log in trackers.items():
        try:
            run_id = log(result)
        except IntegrationError as exc:
            if failed is not None:
                error(str(failed))
            failed = exc
            continue
        if not quiet:
            click.echo(f"rankeval: logged to {name} run {run_id}", err=True)
    if failed is not None:
        raise failed


def _margins(kw, settings) -> list:
    """--non-inferior and --equivalent, checked before any input is read."""
    from rankeval.analysis.equivalence import parse

    margins = [parse(kind, text, list(settings.metrics), settings)
               for kind in ("non_inferior", "equivalent") for text in kw[kind]]
    if margins and kw["baseline_per_user"] is None:
        raise OptionError("{opt:non_inferior} and {opt:equivalent} need {opt:baseline_per_user} "
                          "FILE: the baseline run's per-user values (its --per-user file)")
    if kw["baseline_per_user"] is not None and not margins:
        raise OptionError("{opt:baseline_per_user} is for {opt:non_inferior} and "
                          "{opt:equivalent}: give one")
    if not 0 < kw["alpha"] < 1:
        raise OptionError("{opt:alpha} must lie strictly between 0 and 1")
    return margins


def _finish_gates(result, junit: str | None, quiet: bool) -> int:
    """CI artifacts and the gate verdicts on stderr; exit 1 when a gate failed."""

    if junit is not None:
        from rankeval.io.output import write_text
        from rankeval.report import junit as junit_report

        write_text(junit, junit_report.render(result))
    step_summary(result, "score")
    for verdict in result.gates.verdicts:
        if not verdict.passed or not quiet:
            click.echo(f"rankeval: {verdict.message()}", err=True)
    return 0 if result.passed else EXIT_GATE_FAILED


def _check_outputs(output: str, per_user: str | None, junit: str | None, fmt: str,
                   inputs: list[str], baseline: str | None, html: str | None,
                   engine) -> None:
    """Before reading anything: every output can be written, none is an input, and at most
    one input comes from standard input."""
    from rankeval.io.formats import STDIN, STDOUT
    from rankeval.io.output import check_distinct, check_writable

    if sum(x == STDIN for x in inputs) > 1:
        raise OptionError("only one input can be read from standard input")
    if junit is not None:
        check_writable(junit, "--junit")
    check_html(fmt, html)
    if per_user is not None:
        engine.check_per_user(per_user, inputs)
        if per_user == STDOUT and output == STDOUT and not FORMATS[fmt].console:
            raise OptionError("--per-user - takes stdout: write the report elsewhere with -o FILE")
    check_writable(output, "--output")
    check_distinct({"--output": output, "--junit": junit, "--html": html,
                    **({"--per-user": per_user} if per_user and "://" not in per_user else {})},
                   [*inputs, *([baseline] if baseline else [])])


def _check_breakdowns(stats: str | None, segments: str | None, segment_by,
                      bins: str | None) -> list[str]:
    """--stats and --segments/--segment-by are read before any input, so that a typo costs
    no scoring; the --segment-by columns with --segment-bins applied."""
    from rankeval.analysis.segments import with_bins

    segment_by = with_bins(segment_by, bins)
    if stats:
        from rankeval.analysis.distribution import parse_stats

        parse_stats(stats)
    if segment_by and segments is None:
        raise OptionError("{opt:segment_by} needs {opt:segments} FILE")
    if bins and not segment_by:
        raise OptionError("{opt:segment_bins} cuts --segment-by columns: give one")
    if segments is not None:
        from rankeval.analysis.segments import parse_by

        parse_by(segment_by)
    return segment_by
