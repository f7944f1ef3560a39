"""``rankeval score``: metrics per user and overall, reports, and quality gates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rankeval.cli.app import cli, show_notices, warn
from rankeval.cli.config import say_verdicts
from rankeval.cli.emit import check_html, emit, step_summary, write_html
from rankeval.cli.gold import gold_options, gold_request
from rankeval.cli.options import (
    Command,
    breakdown_options,
    engine_options,
    gate_options,
    per_user_options,
    pop_options,
    report_options,
    scored_inputs,
    tracker_options,
)
from rankeval.cli.preferences import score_preferences
from rankeval.cli.trackers import log_to, open_trackers
from rankeval.compat import left_out
from rankeval.errors import OptionError
from rankeval.io.formats import STDIN, STDOUT
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable, write_text
from rankeval.report import FORMATS


@cli.command(cls=Command)
@scored_inputs
@per_user_options
@gate_options
@tracker_options
@breakdown_options
@gold_options
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
    from rankeval.api import score as verb  # --help's import cost: numpy, pyarrow
    from rankeval.api.request import request  # --help's import cost: numpy, pyarrow

    if kw.get("preferences"):  # trec_eval's prefs_* measures, scored apart
        return score_preferences(predictions, truth, kw)
    fmt, output, per_user, quiet = kw["fmt"].lower(), kw["output"], kw["per_user"], kw["quiet"]
    _check_per_query(fmt, kw["per_query"], kw["no_summary"])
    gates, metrics = verb.GateOptions.take(kw), list(kw.pop("metrics"))
    breakdown = {n: kw.pop(n) for n in ("stats", "segments", "segment_by", "segment_bins")}
    segmented = bool(breakdown["segments"] and breakdown["segment_by"])
    made = request(
        predictions, truth, metrics or None, list(kw.pop("k")) or None, pop_options(kw),
        engine=kw.pop("engine"), reading=Reading.take(kw),
        breakdown={**breakdown, "gaps": bool(gates.max_gap)},
        intervals=(kw["confidence"], kw["rounds"], kw["seed"]) if kw["intervals"] else None,
        keep_values=bool(kw["html"] or kw["per_query"] or gates.non_inferior
                         or gates.equivalent), quiet=quiet,
        checks={"left_out": _warn_left_out(metrics, fmt == "trec"),
                **gates.checks(segmented)}, judgment_groups=True)
    gold = gold_request(kw, made.job, made.engine, {"--output": output, "--per-user": per_user,
                                                    "--junit": kw["junit"], "--html": kw["html"]})
    _check_outputs(output, per_user, kw["junit"], fmt, made.job.paths, gates.baseline,
                   kw["html"], made.engine)
    trackers = open_trackers(kw)

    result = verb.score(made, gates, per_user, gold)
    lines = {"per_user": kw["per_query"], "summary": not kw["no_summary"]}
    emit(output, fmt, "score", result, to_stderr=output == STDOUT and per_user == STDOUT,
         **(lines if FORMATS[fmt].per_query else {}))
    write_html(kw["html"], "score", result)
    show_notices(result.notices, quiet)  # after the report: data first, then what to mind
    code = _finish_gates(result, kw["junit"], quiet)
    # The verdict is decided and said (FAILED lines, JUnit) before any tracker is called; a
    # tracker's failure then exits 2, over a gate's 1 (docs/integrations.md)
    log_to(trackers, result, quiet)
    return code


def _warn_left_out(metrics: list[str], text_lines: bool) -> Callable[[Any], None]:
    """A check of the request: the measures the report leaves out (trec_eval's text measures
    outside -f trec) and trec_eval's parameters read as it reads them, each a warning."""

    def check(settings) -> None:
        for message in left_out(metrics, settings.compat, text_lines,
                                settings.judgment_groups):
            warn(message)

    return check


def _check_per_query(fmt: str, per_query: bool, no_summary: bool) -> None:
    """trec_eval's -q and -n: per-user lines of the formats that have them. -n without -q
    prints nothing, as trec_eval and ir_measures print nothing (exit 0)."""
    if no_summary and not FORMATS[fmt].per_query:
        raise OptionError("{opt:no_summary} leaves out the 'all' lines of --format trec and "
                          "ir_measures; other formats have none")
    if per_query and not FORMATS[fmt].per_query:
        raise OptionError("{opt:per_query} adds per-user lines to --format trec and "
                          "ir_measures; for other "
                          "formats use {opt:per_user} FILE")


def _finish_gates(result, junit: str | None, quiet: bool) -> int:
    """CI artifacts and the gate verdicts on stderr; exit 1 when a gate failed."""

    if junit is not None:
        from rankeval.report import junit as report  # --help's import cost: xml, for --junit

        write_text(junit, report.render(result))
    step_summary(result, "score")
    return say_verdicts(result.gates.verdicts, result.passed, quiet)


def _check_outputs(output: str, per_user: str | None, junit: str | None, fmt: str,
                   inputs: list[str], baseline: str | None, html: str | None,
                   engine) -> None:
    """Before reading anything: every output can be written, none is an input, and at most
    one input comes from standard input."""
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
