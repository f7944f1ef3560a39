"""``rankeval compare``: several runs against one truth, with paired significance tests."""

from __future__ import annotations

import click
from click.core import ParameterSource

from rankeval.cli.app import cli, show_said, warn
from rankeval.cli.config import say_verdicts
from rankeval.cli.emit import check_html, emit, step_summary, write_html
from rankeval.cli.gold import compare_gold_options
from rankeval.cli.options import (
    RENAMED_KEY,
    Command,
    option,
    pop_options,
    report_options,
    scoring_options,
    segment_options,
    stack,
    test_options,
)
from rankeval.cli.param_types import MAX_USERS_SHOWN, number
from rankeval.errors import OptionError
from rankeval.io.columns import EXTRA
from rankeval.io.formats import STDOUT
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable, per_user_format, write_per_user
from rankeval.report import FORMATS


def run_options(f):
    """The runs' names and which of them are the baselines."""
    return stack(
        click.option("--name", "names", multiple=True,
                     help="A name per run, in order (default: the file stems)."),
        click.option("--baseline-run", multiple=True, metavar="RUN",
                     help="The run the others are compared with (default: the first run); "
                     "repeat for several baselines, each run tested against each, corrected "
                     "over all tests of a metric."),
        click.option("--baseline", "_old_baseline_run", hidden=True, expose_value=False,
                     callback=lambda ctx, p, v: _renamed_baseline(ctx, v)))(f)


def view_options(f):
    """What compare adds to the tests: intervals, the users most changed, per-user values."""
    return stack(
        option("intervals", help="Add a bootstrap confidence interval (over the users "
               "compared) to every run's mean."),
        option("confidence"),
        click.option("--top-changes", type=number(0, MAX_USERS_SHOWN, integer=True),
                     default=0, metavar="N",
                     help="List the N users most helped and most hurt, per run and metric."),
        click.option("--per-user", metavar="FILE",
                     help="Also write every run's per-user values side by side (columns "
                     "RUN/METRIC) for the users compared: .csv, .parquet, or - for stdout."))(f)


def compare_gate_options(f):
    """compare's gates and what they weigh: --fail-if-worse, --min-effect, --all-pairs,
    --rbo, the margins."""
    return stack(
        click.option("--fail-if-worse", is_flag=True,
                     help="Gate: exit 1 when a run is significantly worse than the baseline."),
        click.option("--min-effect", multiple=True, metavar="[METRIC=]DELTA[%]",
                     help="The smallest difference that matters (absolute, or % of the "
                     "baseline's mean), for METRIC or every metric: a significant difference "
                     "below it is marked ~, not *, and --fail-if-worse ignores it "
                     "(repeatable)."),
        click.option("--all-pairs", is_flag=True,
                     help="Also test every pair of runs: randomised Tukey HSD over all pairs "
                     "(the default; --rounds permutations), or the paired --test with the "
                     "--correction given, over all pairs; the runs grouped by a compact "
                     "letter display."),
        click.option("--rbo", type=number(0, 1, low_open=True, high_open=True), metavar="P",
                     help="Also the rank-biased overlap (Webber et al. 2010) of each run with "
                     "each baseline, user by user, with persistence P (0.9: the top 10 ranks "
                     "weigh 86%): its extrapolated value, its min and max bounds and their "
                     "residual."),
        option("non_inferior"), option("equivalent"))(f)


@cli.command(name="compare", cls=Command)
@click.argument("files", metavar="RUN_A RUN_B [RUN...] TRUTH", nargs=-1, required=True)
@scoring_options(preds_help="Format of every run (default: each from its extension).")
@run_options
@test_options
@view_options
@compare_gate_options
@segment_options
@compare_gold_options
@option("html")
@report_options("compare")
def compare_command(files, **kw) -> int:
    """Compare runs against TRUTH: means, deltas against a baseline, and which are real.

    As in every command, the predictions come first and the truth last.

    Each metric of each run is compared with the baseline run (or each of several) user by
    user (a paired test over the users both evaluate), corrected for the number of tests. A *
    marks a difference that is significant at --alpha after the correction.

    \b
    Examples:
      rankeval compare a.csv b.csv c.parquet truth.csv
      rankeval compare bm25.run dense.run truth.qrels --compat trec_eval -m map -m ndcg_cut.10
      rankeval compare a.csv b.csv truth.csv --test randomization --rounds 100000 --seed 7
      rankeval compare main.csv pr.csv truth.csv --fail-if-worse -m ndcg@10
      rankeval compare bm25.csv main.csv pr.csv truth.csv --baseline-run bm25 \\
          --baseline-run main
      rankeval compare a.csv b.csv truth.csv --k 1..20 --ci --segments users.csv \\
          --segment-by country -f html -o report.html
      rankeval compare main.csv pr.csv truth.csv --rbo 0.9 --per-user users.csv
      rankeval compare bm25.run llm.run llm.qrels --gold human.qrels -m ndcg@10
    """
    from rankeval.api.compare import compare  # --help's import cost: numpy, pyarrow

    reading = Reading.take(kw)
    runs, truth = _runs_and_truth(list(files), kw, reading)
    _check_outputs(kw, [truth, *runs, *(path for n in EXTRA if (path := kw[n])),
                        *([kw["gold"]] if kw["gold"] else [])])
    result = compare(
        runs, truth, list(kw.pop("metrics")) or None, list(kw.pop("k")) or None,
        names=list(kw["names"]) or None, baseline_run=list(kw["baseline_run"]) or None,
        test=kw["test"], rounds=kw["rounds"], seed=kw["seed"], alpha=kw["alpha"],
        correction=kw["correction"], correct_across=kw["correct_across"],
        confidence=kw["confidence"], intervals=kw["intervals"],
        top_changes=kw["top_changes"], min_effect=kw["min_effect"], all_pairs=_all_pairs(kw),
        non_inferior=kw["non_inferior"], equivalent=kw["equivalent"],
        fail_if_worse=kw["fail_if_worse"], rbo=kw["rbo"],
        segments=kw["segments"], segment_by=kw["segment_by"],
        segment_bins=kw["segment_bins"], gold=kw["gold"], gold_format=kw["gold_format"],
        ppi_lambda=kw["ppi_lambda"], gold_strata=kw["gold_strata"], reading=reading,
        **pop_options(kw))
    show_said(result.said(), kw["quiet"])
    if kw["per_user"] is not None:
        write_per_user(result.per_user_table(), kw["per_user"])
    fmt = kw["fmt"].lower()
    emit(kw["output"], fmt, "compare", result,
         to_stderr=kw["output"] == STDOUT and kw["per_user"] == STDOUT)
    write_html(kw["html"], "compare", result)
    step_summary(result, "compare")
    return say_verdicts(result.gates, result.passed, kw["quiet"])


def _check_outputs(kw, inputs: list[str]) -> None:
    """Before reading anything: every output can be written, and none is an input."""
    check_writable(kw["output"], "--output")
    check_html(kw["fmt"].lower(), kw["html"])
    if kw["per_user"] is not None:
        check_writable(kw["per_user"], "--per-user")
        per_user_format(kw["per_user"])
        if (kw["per_user"] == STDOUT and kw["output"] == STDOUT
                and not FORMATS[kw["fmt"].lower()].console):  # the table goes to stderr
            raise OptionError("--per-user - takes stdout: write the report elsewhere with -o FILE")
    check_distinct({"--output": kw["output"], "--per-user": kw["per_user"],
                    "--html": kw["html"]}, inputs)


def _all_pairs(kw) -> bool | str:
    """The all-pairs procedure: Tukey HSD, unless a --correction was chosen explicitly."""
    if not kw["all_pairs"]:
        return False
    source = click.get_current_context().get_parameter_source("correction")
    return kw["correction"] if source is ParameterSource.COMMANDLINE else "tukey"


def _renamed_baseline(ctx: click.Context, value: str | None) -> None:
    """compare's old --baseline (a run name); in score --baseline is a report file."""
    if value is not None:
        ctx.meta.setdefault(RENAMED_KEY, {})["baseline_run"] = (value,)
        warn("compare --baseline is now --baseline-run (--baseline names a report file in "
             "score); the old spelling will be removed")


def _runs_and_truth(files: list[str], kw, reading) -> tuple[list[str], str]:
    """The runs, then the truth last, as every command takes them. The order of rankeval
    0.1 (truth first) is recognised from the files and taken, with a warning."""
    from rankeval.io.roles import guess_role  # --help's import cost: pyarrow

    if len(files) < 3:
        raise OptionError("compare needs at least two runs and the truth: RUN_A RUN_B TRUTH")
    first, last = files[0], files[-1]
    if (guess_role(first, kw["truth_format"], reading) == "truth"
            and guess_role(last, kw["preds_format"], reading) == "predictions"):
        warn(f"{first} looks like the truth and {last} like a run: compare takes the truth "
             "last (RUN_A RUN_B [RUN...] TRUTH); read as such this time")
        return files[1:], first
    return files[:-1], last
