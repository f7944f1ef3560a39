"""``rankeval agree``: how far machine-judged qrels agree with human ones, on labels and, with
runs, on the systems they order."""

from __future__ import annotations

import click

from rankeval.analysis.choices import CORRECTIONS, TESTS
from rankeval.cli.app import cli, show_notices
from rankeval.cli.config import config_in_use
from rankeval.cli.emit import check_html, emit, step_summary, write_html
from rankeval.cli.options import (
    Command,
    option,
    pop_columns,
    pop_settings,
    report_options,
    scoring_options,
)
from rankeval.io.options import ExtraInputs, Reading
from rankeval.io.output import check_distinct, check_writable


class _Runs(Command):
    """``--runs A B C``: the values after ``--runs`` up to the next option are runs (as if
    ``--runs`` were repeated before each), so the runs follow HUMAN MACHINE."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        taking = False
        for arg in args:
            if arg == "--":
                taking = False
                out.append(arg)
            elif arg == "--runs":
                taking = True
            elif taking and (arg == "-" or not arg.startswith("-")):
                out += ["--runs", arg]
            else:
                taking = False
                out.append(arg)
        return super().parse_args(ctx, out)


@cli.command(name="agree", cls=_Runs)
@click.argument("truth", nargs=2, metavar="HUMAN MACHINE")
@click.option("--runs", multiple=True, metavar="RUN...",
              help="Runs to order under each qrels: every value after --runs up to the next "
              "option (or --runs before each).")
@click.option("--name", "names", multiple=True,
              help="A name per run, in order (default: the file stems).")
@scoring_options(preds_help="Format of every run (default: each from its extension).")
@click.option("--test", type=click.Choice(TESTS), default="t", show_default=True,
              help="Paired test over queries of a swapped pair under the human qrels (as "
              "compare's).")
@option("rounds")
@option("seed")
@option("alpha", help="Significance level of the swaps' tests, after the correction.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default="holm",
              show_default=True, help="Correction over the swapped pairs of each metric "
              "(or of every metric: --correct-across).")
@option("correct_across")
@option("html")
@report_options("agree")
def agree_command(truth, **kw) -> int:
    """How far MACHINE qrels agree with HUMAN qrels: on the labels of the pairs both judged
    and, with --runs, on the order of the runs under each.

    Labels: the confusion matrix, Cohen's kappa (unweighted, linear, quadratic), Krippendorff's
    alpha (nominal, ordinal, interval), the machine's precision and recall per grade and at
    --relevance-threshold; pairs only one side judged are counted. Runs: per metric, each
    run's value under each qrels, Kendall's tau, tau_AP and Spearman between the two orders,
    the pairs of runs that swap with the paired test under the human qrels, and the
    per-query correlation of the metric between the two qrels.

    \b
    Examples:
      rankeval agree human.qrels llm.qrels
      rankeval agree human.qrels llm.qrels --runs bm25.run dense.run rm3.run -m ndcg@10
      rankeval agree human.qrels llm.qrels --relevance-threshold 2 -f json -o agree.json
      rankeval agree human.qrels llm.qrels --runs a.run b.run --html agree.html
    """
    from rankeval.api.agree import agree  # --help's import cost: numpy, pyarrow

    check_writable(kw["output"], "--output")
    check_html(kw["fmt"].lower(), kw["html"])
    human, machine = truth
    check_distinct({"--output": kw["output"], "--html": kw["html"]},
                   [human, machine, *kw["runs"]])
    columns, reading, extra = pop_columns(kw), Reading.take(kw), ExtraInputs.take(kw)
    result = agree(
        human, machine, list(kw["runs"]) or None, list(kw["metrics"]) or None,
        list(kw["k"]) or None, names=list(kw["names"]) or None, test=kw["test"],
        rounds=kw["rounds"], seed=kw["seed"], alpha=kw["alpha"],
        correction=kw["correction"], correct_across=kw["correct_across"],
        compat=kw["compat"], human_format=kw["truth_format"],
        machine_format=kw["truth_format"], preds_format=kw["preds_format"], reading=reading,
        config=config_in_use(click.get_current_context()), **columns, **extra,
        **pop_settings(kw))
    emit(kw["output"], kw["fmt"].lower(), "agree", result)
    write_html(kw["html"], "agree", result)
    step_summary(result, "agree")
    show_notices(result.notices, kw["quiet"])  # after the report, as score's
    return 0
