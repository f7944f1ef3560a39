"""``rankeval power``: how many users a comparison needs, and what it can detect."""

from __future__ import annotations

import click

from rankeval.analysis.choices import ALTERNATIVES, MAX_ROUNDS, MAX_SYSTEMS, METHODS, MIN_ROUNDS
from rankeval.cli.app import cli, warn
from rankeval.cli.emit import check_html, emit, write_html
from rankeval.cli.options import Command, option, pop_options, report_options, scoring_options
from rankeval.cli.param_types import number
from rankeval.errors import OptionError, plural
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable


@cli.command(name="power", cls=Command)
@click.argument("files", metavar="[RUN_A RUN_B TRUTH]", nargs=-1)
@scoring_options(preds_help="Format of both runs (default: each from its extension).")
@click.option("--per-user-a", metavar="FILE", help="Per-user values of the baseline, as "
              "rankeval score --per-user writes them (instead of RUN_A RUN_B TRUTH).")
@click.option("--per-user-b", metavar="FILE", help="Per-user values of the candidate.")
@click.option("--effect", metavar="DELTA[%]",
              help="The difference that matters: absolute (0.01) or relative to the "
              "baseline's mean (1%). Gives the power achieved and the users needed.")
@option("alpha", help="Significance level of the test.")
@click.option("--power", "power_", type=number(0, 1, low_open=True, high_open=True),
              default=0.8, show_default=True,
              help="The power wanted: the chance of detecting the effect when it is there.")
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default="two-sided",
              show_default=True, help="two-sided, or one-sided: larger (B above A), smaller.")
@click.option("--method", type=click.Choice(METHODS), default="t", show_default=True,
              help="t: the paired t-test, exactly (noncentral t); bootstrap: the test "
              "simulated on resampled differences (skewed values, many zeros).")
@option("rounds", default=2000, type=number(MIN_ROUNDS, MAX_ROUNDS, integer=True),
        help="Resamples of each simulated power with --method bootstrap. Default 2,000, not "
        "the 10,000 of score, compare and ope: the search for the detectable effect simulates "
        "some 40 to 100 powers per metric.")
@option("seed")
@click.option("--systems", type=click.IntRange(2, MAX_SYSTEMS), metavar="M",
              help="Also the users needed to detect --effect as the range between the best "
              "and worst of M systems (Sakai's topic-set-size design, one-way ANOVA).")
@click.option("--name", "names", multiple=True, help="Names of the two runs, in order.")
@option("html")
@report_options("power")
def power_command(files, **kw) -> int:
    """How many users a comparison of RUN_B against RUN_A needs, and what it can detect.

    For each metric, from the per-user differences (B - A): their standard deviation; the
    minimum detectable effect (MDE) with the users at hand, at --alpha and --power; and with
    --effect, the power achieved and the users needed. The inputs and options of compare,
    or per-user values already computed (--per-user-a, --per-user-b).

    \b
    Examples:
      rankeval power main.csv candidate.csv truth.csv -m ndcg@10 --effect 0.01
      rankeval power a.csv b.csv truth.csv -m ndcg@10,recall@20 --effect 1% --alternative larger
      rankeval power --per-user-a a_users.csv --per-user-b b_users.csv --effect 0.005 \\
          --method bootstrap --rounds 5000
      rankeval power a.csv b.csv truth.csv -m map@100 --effect 0.02 --systems 8 -f json
    """
    from rankeval.analysis.power import Effect  # --help's import cost: numpy
    from rankeval.api.power import power  # --help's import cost: numpy, pyarrow

    files = list(files)
    if files and len(files) != 3:
        raise OptionError("power takes RUN_A RUN_B TRUTH, or --per-user-a and --per-user-b")
    check_writable(kw["output"], "--output")
    check_html(kw["fmt"].lower(), kw["html"])
    check_distinct({"--output": kw["output"], "--html": kw["html"]},
                   [*files, *(x for x in (kw["per_user_a"], kw["per_user_b"]) if x)])
    options, reading = pop_options(kw), Reading.take(kw)
    effect = Effect.parse(kw["effect"]) if kw["effect"] is not None else None
    run_a, run_b, truth = files if files else (None, None, None)
    if kw["names"] and len(kw["names"]) != 2:
        raise OptionError(f"{{opt:name}} was given {plural(len(kw['names']), 'time')}: "
                          "power names its two runs, "
                          "give it twice (or not at all)")
    result = power(run_a, run_b, truth, list(kw["metrics"]) or None, list(kw["k"]) or None,
                   effect=effect, alpha=kw["alpha"], power=kw["power_"],
                   alternative=kw["alternative"], method=kw["method"], rounds=kw["rounds"],
                   seed=kw["seed"], systems=kw["systems"], per_user_a=kw["per_user_a"],
                   per_user_b=kw["per_user_b"], names=tuple(kw["names"]) or None,
                   reading=reading, **options)  # with the config file in use (pop_options)
    if not kw["quiet"]:
        for line in result.notices:
            warn(line)
    fmt = kw["fmt"].lower()
    emit(kw["output"], fmt, "power", result)
    write_html(kw["html"], "power", result)
    return 0
