"""The command line: a thin shell over the library, with the one error boundary.

Heavy imports (pandas, pyarrow, rich) happen inside the commands so that ``--help`` is fast.
"""

from __future__ import annotations

import os
import sys
import traceback

import click

from . import __version__
from .errors import EXIT_USAGE, OptionError, RankevalError
from .registry import DEFAULT_METRICS, REGISTRY

INTERRUPTED = 130


def _debug_requested(args: list[str]) -> bool:
    return "--debug" in args or os.environ.get("RANKEVAL_DEBUG", "") not in ("", "0")


def _error(message: str) -> None:
    click.echo(f"rankeval: error: {message}", err=True)


class _PipeClosed(Exception):
    """stdout was closed by the reader (``| head``); not an OSError, so click leaves it to us."""


class RankevalGroup(click.Group):
    """The error boundary: every failure becomes one line on stderr and an exit code.

    Exit 1 is reserved for quality gates, so click's own exceptions (whose default is 1) are
    mapped to 2 here, and so is any unexpected crash.
    """

    def invoke(self, ctx):
        # click turns EPIPE into exit 1, which is reserved for gates: intercept it first.
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise _PipeClosed from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(
                argv, prog_name or "rankeval", complete_var, standalone_mode=False, **extra
            )
            code = code if isinstance(code, int) else 0
        except click.exceptions.Abort:
            _error("interrupted")
            code = INTERRUPTED
        except click.ClickException as exc:
            exc.show()
            code = EXIT_USAGE
        except RankevalError as exc:
            _error(str(exc))
            code = exc.exit_code
        except KeyboardInterrupt:
            _error("interrupted")
            code = INTERRUPTED
        except MemoryError:  # pyarrow's ArrowMemoryError is one too
            _error(
                "out of memory: the inputs need more memory than this machine has (about 200 "
                "bytes per prediction row); score the users in parts, e.g. split both files by "
                "user id, or use a machine with more memory"
            )
            code = EXIT_USAGE
        except (BrokenPipeError, _PipeClosed):
            # `rankeval ... | head` closed our stdout: stop quietly. Point stdout at devnull so
            # the interpreter's final flush does not raise again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            code = 0
        except Exception as exc:
            if _debug_requested(argv):
                traceback.print_exc()
            _error(
                f"internal error: {type(exc).__name__}: {exc} "
                "(run again with --debug for the traceback, and please report it)"
            )
            code = EXIT_USAGE
        if standalone_mode:
            sys.exit(code)
        return code


def console(file, width: int | None = None, plain: bool = False):
    """A rich console on ``file``. ``NO_COLOR`` (any value) means no escape codes at all."""
    from rich.console import Console

    plain = plain or bool(os.environ.get("NO_COLOR"))
    return Console(file=file, width=width, color_system=None if plain else "auto")


def _metric_help() -> str:
    return ", ".join(REGISTRY)


@click.group(cls=RankevalGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="rankeval")
def cli() -> None:
    """Evaluate rankings and recommendations against ground truth.

    \b
    rankeval score preds.csv truth.csv --k 10        # metrics per user and overall
    rankeval validate preds.csv truth.csv            # every problem, without scoring
    rankeval compare truth.csv a.csv b.csv           # which differences are real
    rankeval convert preds.csv preds.run             # between CSV/TSV/Parquet/TREC/JSON
    rankeval metrics                                # what every metric means

    Exit codes: 0 success, 1 a quality gate failed, 2 usage or input error.
    """
    from .memory import retain_freed_memory

    retain_freed_memory()


def _load_config(ctx: click.Context, param, value: str | None) -> None:
    """Eager --config: the file's settings become the defaults of the other options."""
    from .config import default_map, find_config

    found = find_config(value)
    if found is None:
        return
    path, table = found
    # Keys are the long flags without dashes (k, metrics, fail_under, format, ...).
    params = {
        opt.lstrip("-").replace("-", "_"): p
        for p in ctx.command.params
        if isinstance(p, click.Option) and p.name not in ("config", "debug", "help")
        for opt in p.opts
        if opt.startswith("--")
    }
    ctx.default_map = {**(ctx.default_map or {}), **default_map(path, table, params)}


def _column_options(f):
    """--user-col ... --relevance-col, the same on every command that reads inputs."""
    for role, default in reversed(
        [("user", "user_id"), ("item", "item_id"), ("rank", "rank"), ("score", "score"),
         ("relevance", "relevance")]
    ):
        f = click.option(f"--{role}-col", help=f"{COLUMN_HELP} Default {default}.")(f)
    return f


def _debug_option(f):
    return click.option(
        "--debug",
        is_flag=True,
        hidden=False,
        help="Show the Python traceback of an unexpected error.",
    )(f)


# Kept here (not imported from readers) so that --help does not import pyarrow.
PREDS_FORMATS = ["csv", "tsv", "parquet", "trec", "run", "json", "jsonl"]
TRUTH_FORMATS = ["csv", "tsv", "parquet", "trec", "qrels", "json", "jsonl"]
COLUMN_HELP = "Column name, when the default and its aliases are not in the file."


@cli.command()
@click.argument("predictions", metavar="PREDS")
@click.argument("truth", metavar="TRUTH")
@click.option(
    "-k",
    "--k",
    "ks",
    multiple=True,
    metavar="K[,K...]",
    help="Cut-off(s): repeat or comma-separate (--k 5 --k 10, --k 5,10,20). Default 10.",
)
@click.option(
    "-m",
    "--metrics",
    "metrics",
    multiple=True,
    metavar="NAME[@K]",
    help=f"Metrics to compute: repeat or comma-separate; NAME alone takes every K. "
    f"Known: {_metric_help()}. Default: {', '.join(DEFAULT_METRICS)}.",
)
@click.option(
    "--compat",
    type=click.Choice(["trec_eval"], case_sensitive=False),
    help="Every convention as trec_eval's (AP over R, relevance >= 1, users without relevant "
    "items scored 0, trec ties, missing users 0 as with -c), and trec_eval measure names in "
    "-m (P.5,10  map  ndcg_cut.10  recip_rank  Rprec  success.10).",
)
@click.option(
    "--gain",
    type=click.Choice(["linear", "exponential"], case_sensitive=False),
    help="Gain of a relevance r in CG/DCG/NDCG: linear r (default), or exponential 2^r - 1.",
)
@click.option(
    "--ap-denominator",
    type=click.Choice(["min", "relevant"], case_sensitive=False),
    help="Divide AP@K by min(R, K) (default), or by R, all relevant items (trec_eval).",
)
@click.option(
    "--rr-target",
    type=click.Choice(["first-relevant", "most-relevant"], case_sensitive=False),
    help="MRR uses the rank of the first relevant item (default), or of the most relevant one.",
)
@click.option(
    "--ties",
    type=click.Choice(["trec", "item-asc", "input"], case_sensitive=False),
    help="Order of tied scores: item id descending as trec_eval (default), item id ascending, "
    "or the order of the rows in the file.",
)
@click.option(
    "--relevance-threshold",
    type=float,
    metavar="T",
    help="An item is relevant when relevance >= T (default: relevance > 0).",
)
@click.option(
    "--skip-missing-users",
    is_flag=True,
    help="Leave out users with relevant items but no predictions (default: they score 0).",
)
@click.option(
    "--zero-relevant-users",
    type=click.Choice(["skip", "zero"], case_sensitive=False),
    help="Users with no relevant item: leave out (default), or score 0 and average in "
    "(trec_eval).",
)
@click.option(
    "--dedupe",
    is_flag=True,
    help="Keep the best-ranked of repeated (user, item) predictions instead of failing.",
)
@_column_options
@click.option(
    "--preds-format",
    type=click.Choice(PREDS_FORMATS, case_sensitive=False),
    help="Format of PREDS (default: from the extension; required for -).",
)
@click.option(
    "--truth-format",
    type=click.Choice(TRUTH_FORMATS, case_sensitive=False),
    help="Format of TRUTH (default: from the extension; required for -).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv", "markdown", "trec"], case_sensitive=False),
    default="table",
    show_default=True,
    help="Report format; trec is trec_eval's 'measure user value' lines.",
)
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    metavar="FILE",
    help="Write the report to FILE (- for stdout).",
)
@click.option(
    "--per-user",
    metavar="FILE",
    help="Also write one row per evaluated user: .csv, .parquet, or - for stdout.",
)
@click.option(
    "-q",
    "--per-query",
    is_flag=True,
    help="With --format trec: a line per user and measure before the 'all' lines "
    "(trec_eval's -q).",
)
@click.option(
    "--fail-under",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Gate: exit 1 when METRIC's mean is below VALUE (repeatable; also 'ndcg@10>=0.35').",
)
@click.option(
    "--fail-over",
    multiple=True,
    metavar="METRIC=VALUE",
    help="Gate: exit 1 when METRIC's mean is above VALUE (repeatable).",
)
@click.option(
    "--baseline",
    metavar="REPORT.json",
    help="A JSON report of an earlier run (-f json -o FILE) to compare with.",
)
@click.option(
    "--max-drop",
    multiple=True,
    metavar="[METRIC=]DROP[%]",
    help="Gate against --baseline: exit 1 when METRIC falls more than DROP (absolute, or "
    "relative with %); without METRIC, for every metric in both reports.",
)
@click.option(
    "--allow-settings-change",
    is_flag=True,
    help="Compare with a --baseline computed with other settings.",
)
@click.option("--junit", metavar="FILE", help="Also write the gates as JUnit XML test cases.")
@click.option(
    "--config",
    metavar="FILE",
    is_eager=True,
    expose_value=False,
    callback=_load_config,
    help="Read options from FILE ([tool.rankeval] in pyproject.toml, or rankeval.toml); by "
    "default ./rankeval.toml or ./pyproject.toml when they have the section. Flags override it.",
)
@click.option("--ci", is_flag=True,
              help="Add a bootstrap confidence interval (over users) to every mean.")
@click.option("--ci-level", type=float, default=0.95, show_default=True,
              help="Confidence level of --ci.")
@click.option("--ci-rounds", type=int, default=10_000, show_default=True,
              help="Bootstrap resamples of --ci.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --ci.")
@click.option("--quiet", is_flag=True, help="Do not print warnings.")
@_debug_option
def score(
    predictions,
    truth,
    ks,
    metrics,
    compat,
    gain,
    ap_denominator,
    rr_target,
    ties,
    relevance_threshold,
    skip_missing_users,
    zero_relevant_users,
    dedupe,
    user_col,
    item_col,
    rank_col,
    score_col,
    relevance_col,
    preds_format,
    truth_format,
    fmt,
    output,
    per_user,
    per_query,
    fail_under,
    fail_over,
    baseline,
    max_drop,
    allow_settings_change,
    junit,
    ci,
    ci_level,
    ci_rounds,
    seed,
    quiet,
    debug,
) -> int:
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
      cat preds.tsv | rankeval score - truth.csv --preds-format tsv --per-user users.csv
      rankeval score preds.csv truth.csv --gain exponential --ap-denominator relevant
      rankeval score preds.csv truth.csv --fail-under ndcg@10=0.35 --baseline main.json \\
          --max-drop 1% --junit gates.xml

    Exit codes: 0 success, 1 a gate failed (after the full report), 2 usage or input error.
    """
    from .evaluation import evaluate_inputs, make_settings
    from .gates import plan_gates
    from .progress import Stages
    from .progress import wanted as progress_wanted
    from .readers import STDIN, open_table
    from .validate import load_predictions, load_truth
    from .writers import STDOUT, check_writable, per_user_format, write_per_user, write_text

    def lower(value: str | None) -> str | None:
        return value.lower() if value else None

    fmt = fmt.lower()
    if per_query and fmt != "trec":
        raise OptionError("-q/--per-query adds per-user lines to --format trec; "
                          "for other formats use --per-user FILE")
    settings = make_settings(
        list(metrics) or None,
        list(ks) or None,
        compat=lower(compat),
        gain=lower(gain),
        ap_denominator=lower(ap_denominator),
        rr_target=lower(rr_target),
        ties=lower(ties),
        relevance_threshold=relevance_threshold,
        skip_missing_users=skip_missing_users or None,  # an unset flag leaves the default
        zero_relevant_users=lower(zero_relevant_users),
        dedupe=dedupe,
    )
    plan = plan_gates(settings, fail_under, fail_over, max_drop, baseline, allow_settings_change)
    if junit is not None:
        check_writable(junit, "--junit")
    if predictions == STDIN and truth == STDIN:
        raise OptionError("PREDS and TRUTH cannot both be read from standard input")
    if per_user is not None:
        per_user_format(per_user)
        check_writable(per_user, "--per-user")
        if per_user == STDOUT and output == STDOUT and fmt.lower() != "table":
            raise OptionError("--per-user - takes stdout: write the report elsewhere with -o FILE")
    check_writable(output, "--output")

    with Stages(sys.stderr, enabled=progress_wanted(sys.stderr, quiet)) as progress:
        progress.stage(f"reading {predictions}")
        preds_table = open_table(predictions, preds_format, "--preds-format", role="predictions")
        preds = load_predictions(preds_table, user_col, item_col, rank_col, score_col)
        progress.stage(f"reading {truth}")
        truth_table = open_table(truth, truth_format, "--truth-format", role="truth")
        gold = load_truth(truth_table, user_col, item_col, relevance_col)
        progress.stage(f"scoring {preds.source.rows:,} predictions")
        result = evaluate_inputs(preds, gold, settings)
        if ci:
            progress.stage("bootstrapping confidence intervals")
            result.add_intervals(ci_level, ci_rounds, seed)
    result.apply_gates(plan)

    if not quiet:
        for notice in result.notices:
            click.echo(f"rankeval: warning: {notice.message}", err=True)
    if per_user is not None:
        write_per_user(result.per_user_table(), per_user)
    if fmt == "table":
        from .report import render_table

        # With --per-user - the data owns stdout, so the human summary goes to stderr.
        to_stderr = output == STDOUT and per_user == STDOUT
        if output == STDOUT:
            render_table(result, console(sys.stderr if to_stderr else sys.stdout))
        else:
            import io

            buffer = io.StringIO()
            render_table(result, console(buffer, width=100, plain=True))
            write_text(output, buffer.getvalue())
    else:
        from .report import render_text

        write_text(output, render_text(result, fmt, per_user=per_query))
    return _finish_gates(result, junit, quiet)


def _finish_gates(result, junit: str | None, quiet: bool) -> int:
    """CI artifacts and the gate verdicts on stderr; exit 1 when a gate failed."""
    from .ci import append_step_summary, render_junit
    from .errors import EXIT_GATE_FAILED
    from .writers import write_text

    if junit is not None:
        write_text(junit, render_junit(result))
    append_step_summary(result)
    for verdict in result.verdicts:
        if not verdict.passed or not quiet:
            click.echo(f"rankeval: {verdict.message()}", err=True)
    return 0 if result.passed else EXIT_GATE_FAILED


@cli.command()
@click.argument("predictions", metavar="PREDS")
@click.argument("truth", metavar="TRUTH")
@click.option("-k", "--k", "ks", multiple=True, metavar="K[,K...]",
              help="Cut-offs, for the ties and rows-beyond-K counts. Default 10.")
@click.option("--relevance-threshold", type=float, metavar="T",
              help="An item is relevant when relevance >= T (default: relevance > 0).")
@click.option("--skip-missing-users", is_flag=True,
              help="Count users without predictions as left out, as score would.")
@click.option("--zero-relevant-users", type=click.Choice(["skip", "zero"]),
              help="Count users without relevant items as left out (default) or scored 0.")
@click.option("--ties", type=click.Choice(["trec", "item-asc", "input"]),
              help="Order of tied scores, as for score.")
@click.option("--dedupe", is_flag=True,
              help="Repeated (user, item) predictions are a warning, as score --dedupe makes them.")
@_column_options
@click.option("--preds-format", type=click.Choice(PREDS_FORMATS, case_sensitive=False),
              help="Format of PREDS (default: from the extension; required for -).")
@click.option("--truth-format", type=click.Choice(TRUTH_FORMATS, case_sensitive=False),
              help="Format of TRUTH (default: from the extension; required for -).")
@click.option("--strict", is_flag=True, help="Warnings fail the check too (exit 2).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Report format.")
@_debug_option
def validate(predictions, truth, ks, relevance_threshold, skip_missing_users,
             zero_relevant_users, ties, dedupe, preds_format, truth_format, strict, fmt, debug,
             **cols) -> int:
    """Check PREDS and TRUTH without scoring: every problem, every count, every warning.

    Exit 0 when `rankeval score` can score the files (warnings allowed unless --strict),
    2 when it cannot. The report goes to stdout; the verdict line to stderr.

    \b
    Examples:
      rankeval validate preds.csv truth.csv
      rankeval validate run.trec qrels.txt --truth-format qrels --strict
      rankeval validate preds.parquet truth.parquet -f json | jq .errors
    """
    from .check import check_inputs
    from .evaluation import make_settings

    settings = make_settings(
        None, list(ks) or None, relevance_threshold=relevance_threshold,
        skip_missing_users=skip_missing_users or None, zero_relevant_users=zero_relevant_users,
        ties=ties, dedupe=dedupe,
    )
    result = check_inputs(predictions, truth, settings, preds_format=preds_format,
                          truth_format=truth_format, **cols)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.to_dict(strict), indent=2))
    else:
        click.echo(_check_text(result, strict), nl=False)
    ok = result.ok(strict)
    problems = len(result.errors) + (len(result.notices) if strict else 0)
    if ok:
        click.echo(f"rankeval: ok: the inputs can be scored ({len(result.notices)} warnings)",
                   err=True)
        return 0
    click.echo(f"rankeval: error: the inputs cannot be scored ({problems} problems)", err=True)
    return EXIT_USAGE


def _check_text(result, strict: bool) -> str:
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
    label = "error" if strict else "warning"
    lines += [f"{label}: {n.message}" for n in result.notices]
    lines += [f"error: {e}" for e in result.errors]
    return "\n".join(lines) + "\n"


@cli.command(name="compare")
@click.argument("truth", metavar="TRUTH")
@click.argument("runs", metavar="RUN_A RUN_B [RUN...]", nargs=-1, required=True)
@click.option("-k", "--k", "ks", multiple=True, metavar="K[,K...]",
              help="Cut-off(s), as for score. Default 10.")
@click.option("-m", "--metrics", multiple=True, metavar="NAME[@K]",
              help="Metrics, as for score (default: ndcg, map, recall).")
@click.option("--name", "names", multiple=True,
              help="A name per run, in order (default: the file stems).")
@click.option("--baseline", help="The run the others are compared with (default: the first).")
@click.option("--test", type=click.Choice(["t", "randomization", "bootstrap", "wilcoxon"]),
              default="t", show_default=True, help="Paired significance test over users.")
@click.option("--rounds", type=int, default=10_000, show_default=True,
              help="Resamples for the randomization and bootstrap tests and intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the resampling.")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Significance level, after the correction.")
@click.option("--correction", type=click.Choice(["holm", "bonferroni", "none"]), default="holm",
              show_default=True, help="Multiple-comparison correction across the runs, per metric.")
@click.option("--ci-level", type=float, default=0.95, show_default=True,
              help="Confidence level of the interval of each difference.")
@click.option("--top-changes", type=int, default=0, metavar="N",
              help="List the N users most helped and most hurt, per run and metric.")
@click.option("--fail-if-worse", is_flag=True,
              help="Gate: exit 1 when a run is significantly worse than the baseline.")
@click.option("--compat", type=click.Choice(["trec_eval"]), help="As for score.")
@click.option("--gain", type=click.Choice(["linear", "exponential"]), help="As for score.")
@click.option("--ap-denominator", type=click.Choice(["min", "relevant"]), help="As for score.")
@click.option("--rr-target", type=click.Choice(["first-relevant", "most-relevant"]),
              help="As for score.")
@click.option("--ties", type=click.Choice(["trec", "item-asc", "input"]), help="As for score.")
@click.option("--relevance-threshold", type=float, metavar="T", help="As for score.")
@click.option("--skip-missing-users", is_flag=True, help="As for score.")
@click.option("--zero-relevant-users", type=click.Choice(["skip", "zero"]), help="As for score.")
@_column_options
@click.option("--truth-format", type=click.Choice(TRUTH_FORMATS, case_sensitive=False),
              help="Format of TRUTH (default: from the extension).")
@click.option("--runs-format", type=click.Choice(PREDS_FORMATS, case_sensitive=False),
              help="Format of every run (default: each from its extension).")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "markdown", "csv"]),
              default="table", show_default=True, help="Report format.")
@click.option("-o", "--output", default="-", metavar="FILE", help="Write the report to FILE.")
@click.option("--quiet", is_flag=True, help="Do not print warnings.")
@_debug_option
def compare_command(truth, runs, ks, metrics, names, baseline, test, rounds, seed, alpha,
                    correction, ci_level, top_changes, fail_if_worse, compat, gain,
                    ap_denominator, rr_target, ties, relevance_threshold, skip_missing_users,
                    zero_relevant_users, user_col, item_col, rank_col, score_col, relevance_col,
                    truth_format, runs_format, fmt, output, quiet, debug) -> int:
    """Compare runs against TRUTH: means, deltas against a baseline, and which are real.

    Each metric of each run is compared with the baseline run user by user (a paired test over
    the users both evaluate), corrected for the number of runs. A * marks a difference that is
    significant at --alpha after the correction.

    \b
    Examples:
      rankeval compare truth.csv a.csv b.csv c.parquet
      rankeval compare truth.qrels bm25.run dense.run --compat trec_eval -m map -m ndcg_cut.10
      rankeval compare truth.csv a.csv b.csv --test randomization --rounds 100000 --seed 7
      rankeval compare truth.csv main.csv pr.csv --fail-if-worse -m ndcg@10
    """
    from .compare import compare_runs, run_names
    from .errors import EXIT_GATE_FAILED
    from .evaluation import make_settings
    from .readers import open_table
    from .report import render_compare_csv, render_compare_markdown, render_compare_table
    from .validate import load_truth
    from .writers import STDOUT, check_writable, write_text

    if len(runs) < 2:
        raise OptionError("compare needs at least two runs (the first is the baseline)")
    settings = make_settings(
        list(metrics) or ["ndcg", "map", "recall"], list(ks) or None, compat=compat, gain=gain,
        ap_denominator=ap_denominator, rr_target=rr_target, ties=ties,
        relevance_threshold=relevance_threshold, skip_missing_users=skip_missing_users or None,
        zero_relevant_users=zero_relevant_users,
    )
    labels = run_names(list(runs), list(names))
    if top_changes < 0:
        raise OptionError("--top-changes must be 0 or more")
    check_writable(output, "--output")
    gold = load_truth(open_table(truth, truth_format, "--truth-format", role="truth"),
                      user_col, item_col, relevance_col)
    result = compare_runs(
        gold, list(zip(labels, runs, strict=True)), settings, baseline=baseline, test=test,
        rounds=rounds, seed=seed, alpha=alpha, correction=correction, ci_level=ci_level,
        top_changes=top_changes, runs_format=runs_format,
        columns={"user_col": user_col, "item_col": item_col, "rank_col": rank_col,
                 "score_col": score_col},
    )
    if not quiet:
        seen = set()
        for r in result.runs:
            for notice in r.evaluation.notices:
                if notice.message not in seen:
                    seen.add(notice.message)
                    click.echo(f"rankeval: warning: {r.name}: {notice.message}", err=True)
        for notice in result.notices:
            click.echo(f"rankeval: warning: {notice.message}", err=True)
    if fmt == "table" and output == STDOUT:
        render_compare_table(result, console(sys.stdout))
    elif fmt == "table":
        import io

        buffer = io.StringIO()
        render_compare_table(result, console(buffer, width=120, plain=True))
        write_text(output, buffer.getvalue())
    elif fmt == "json":
        import json

        write_text(output, json.dumps(result.to_dict(), indent=2) + "\n")
    else:
        render = render_compare_markdown if fmt == "markdown" else render_compare_csv
        write_text(output, render(result))
    if fail_if_worse and result.worse:
        for c in result.worse:
            click.echo(f"rankeval: FAILED {c.run} is worse than {result.baseline} on {c.metric}: "
                       f"{c.stats.delta:+.4f} (p adjusted {c.p_adjusted:.3g})", err=True)
        return EXIT_GATE_FAILED
    return 0


ALL_FORMATS = ["csv", "tsv", "parquet", "trec", "run", "qrels", "json", "jsonl"]


@cli.command()
@click.argument("source", metavar="IN")
@click.argument("target", metavar="OUT")
@click.option(
    "--kind",
    type=click.Choice(["predictions", "truth"], case_sensitive=False),
    help="What IN holds (default: from the name, .run/.qrels, or the columns: a relevance "
    "column means truth).",
)
@click.option("--from", "from_format", type=click.Choice(ALL_FORMATS, case_sensitive=False),
              help="Format of IN (default: from the extension; required for -).")
@click.option("--to", "to_format", type=click.Choice(ALL_FORMATS, case_sensitive=False),
              help="Format of OUT (default: from the extension; required for -).")
@click.option("--tag", default="rankeval", show_default=True,
              help="Run tag, the last field of each line of a TREC run.")
@click.option(
    "--ties",
    type=click.Choice(["trec", "item-asc", "input"], case_sensitive=False),
    default="trec",
    show_default=True,
    help="Order of tied scores when writing a TREC run or JSON in ranking order.",
)
@_column_options
@click.option("--quiet", is_flag=True, help="Do not print the summary line.")
@_debug_option
def convert(source, target, kind, from_format, to_format, tag, ties, quiet, debug, **cols) -> int:
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
      cat preds.tsv | rankeval convert - - --from tsv --to trec --kind predictions > preds.run
    """
    from .convert import convert as run_convert

    done = run_convert(
        source,
        target,
        kind=kind.lower() if kind else None,
        from_format=from_format,
        to_format=to_format,
        tag=tag,
        ties=ties.lower(),
        **cols,
    )
    if not quiet:
        for notice in done.notices:
            click.echo(f"rankeval: warning: {notice.message}", err=True)
        click.echo(
            f"rankeval: wrote {done.rows:,} rows of {done.kind} ({done.source_format} -> "
            f"{done.target_format}) to {'standard output' if target == '-' else target}",
            err=True,
        )
    return 0


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
    """List every metric: name, aliases and definition.

    \b
    In the definitions: the list is cut at K; hit_j is 1 when the item at rank j is relevant;
    rel_j is its relevance (0 if not in the truth); R is the user's number of relevant items.
    """
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "name": m.name,
                        "aliases": list(m.aliases),
                        "summary": m.summary,
                        "formula": m.formula,
                        "bounded": m.bounded,
                    }
                    for m in REGISTRY.values()
                ],
                indent=2,
            )
        )
    elif fmt == "markdown":
        click.echo(metrics_markdown(), nl=False)
    else:
        from rich.table import Table

        table = Table(box=None, header_style="bold", pad_edge=False)
        for column in ("metric", "aliases", "definition", "per user"):
            table.add_column(column)
        for m in REGISTRY.values():
            table.add_row(m.name, ", ".join(m.aliases), m.summary, m.formula)
        console(sys.stdout).print(table)
    return 0


def metrics_markdown() -> str:
    """The metrics table of the README, generated from the registry."""
    lines = ["| metric | aliases | definition | per user |", "|---|---|---|---|"]
    for m in REGISTRY.values():
        aliases = ", ".join(f"`{a}`" for a in m.aliases)
        lines.append(f"| `{m.name}` | {aliases} | {m.summary} | `{m.formula}` |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """The console entry point (``rankeval`` and ``python -m rankeval``)."""
    cli.main()


if __name__ == "__main__":
    main()
