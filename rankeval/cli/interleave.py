"""``rankeval interleave``: which ranking users prefer. ``make`` the interleaved lists,
``score`` a log of the clicks on them, ``simulate`` an experiment offline from the truth."""

from __future__ import annotations

import click

from rankeval.analysis.choices import (
    CLICK_MODELS,
    CLICK_RULES,
    CLICK_USERS,
    CORRECTIONS,
    INTERLEAVE_GROUPS,
    INTERLEAVE_METHODS,
    MAX_SLOTS,
    interleaving_name,
)
from rankeval.cli.app import RankevalGroup, cli
from rankeval.cli.config import config_in_use, config_option, verbose_option
from rankeval.cli.emit import check_html, emit, step_summary, write_html
from rankeval.cli.options import Command, option, report_options, tracker_options
from rankeval.cli.param_types import number
from rankeval.cli.trackers import log_to, open_trackers
from rankeval.errors import EXIT_GATE_FAILED, plural
from rankeval.io.options import Reading


@cli.group(name="interleave", cls=RankevalGroup)
def interleave() -> None:
    """Which ranking users prefer: interleaving and multileaving (SPEC section 13).

    \b
    rankeval interleave make a.csv b.csv -o lists.csv     # the lists to show, with teams
    rankeval interleave score clicks.parquet              # who won: Delta, CI, sign test
    rankeval interleave simulate a.csv b.csv qrels.txt    # an experiment offline
    """


class Subcommand(Command):
    """An interleave subcommand: its --help groups are the rows "interleave NAME"."""

    group = "interleave "


def _method(f):
    return click.option("--method", type=click.Choice(INTERLEAVE_METHODS), default="team-draft",
                        show_default=True,
                        help="team-draft (Radlinski et al. 2008; team-draft multileaving, "
                        "Schuth et al. 2014, for more than two runs), balanced (Joachims "
                        "2002, two runs) or probabilistic (Hofmann et al. 2011).")(f)


def _tau(f):
    return click.option("--tau", type=number(0, 100, low_open=True), default=3.0,
                        show_default=True, help="Probabilistic interleaving's softmax "
                        "exponent: P(item) proportional to 1 / rank^tau.")(f)


def _slots(f):
    return click.option("-k", "--k", "k", type=number(1, MAX_SLOTS, integer=True), default=10,
                        show_default=True, help="Slots of each interleaved list.")(f)


def _names(f):
    return click.option("--name", "names", multiple=True,
                        help="A team name per run, in order (default: the file names).")(f)


@interleave.command(name="make", cls=Subcommand)
@click.argument("runs", metavar="RUN_A RUN_B [RUN...]", nargs=-1, required=True)
@_method
@_slots
@option("seed", help="Seed of the coin flips and draws.")
@_tau
@_names
@option("output", help="Write the interleaved lists to FILE (- for stdout, as CSV unless "
        "--output-format says otherwise).")
@option("output_format", help="Format of the lists written (default: from the extension): "
        "csv, tsv, parquet, jsonl; trec puts each slot's team in the tag field "
        "(team-draft only).")
@option("preds_format", help="Format of every RUN (default: each from its extension).")
@option("delimiter")
@option("encoding")
@config_option
@option("quiet")
@verbose_option
@option("debug")
def make_command(runs, **kw) -> int:
    """Interleave the rankings of RUN_A, RUN_B (and more: multileaving) for every query, as a
    serving system would show them: one list per query, each slot credited to the team of
    the run that put it there (a team column), with each run's per-slot chance for
    --method probabilistic and each run's rank of the item for --method balanced.

    \b
    Examples:
      rankeval interleave make main.csv candidate.csv -o lists.csv
      rankeval interleave make a.run b.run c.run --k 10 --seed 7 -o lists.parquet
      rankeval interleave make a.csv b.csv --method probabilistic --tau 3 -o - | head
    """
    from rankeval.api.interleave import make  # --help's import cost: numpy, pyarrow

    reading = Reading.take(kw)
    result = make(list(runs), method=kw["method"], k=kw["k"], seed=kw["seed"],
                  tau=kw["tau"], names=list(kw["names"]) or None,
                  run_format=kw["preds_format"], output=kw["output"],
                  output_format=kw["output_format"], reading=reading)
    if not kw["quiet"] and kw["output"] != "-":
        config = config_in_use(click.get_current_context())
        click.echo(f"rankeval: {plural(result.queries, 'interleaved list')} of up to "
                   f"{plural(result.k, 'slot')} "
                   f"({interleaving_name(result.method, len(result.teams))}, teams "
                   f"{', '.join(result.teams)}) written to {kw['output']}"
                   + (f"; options from {config}" if config else ""), err=True)
    return 0


def _gates(f):
    for decorator in reversed((
            click.option("--baseline", metavar="TEAM",
                         help="The team the gates compare every other team with (default: "
                         "the first team, in the order of the log's ids)."),
            click.option("--fail-if-worse", is_flag=True,
                         help="Gate: exit 1 when a team is significantly worse than the "
                         "baseline (the sign test, corrected over the teams, at --alpha)."),
            click.option("--non-inferior", type=number(0, 0.5, low_open=True, high_open=True),
                         metavar="MARGIN",
                         help="Gate: exit 1 unless every team is shown not worse than the "
                         "baseline by more than MARGIN on Delta: the one-sided (1 - alpha) "
                         "lower bound of its Delta lies above -MARGIN."),
            click.option("--plan", type=number(-0.5, 0.5, low_open=True, high_open=True),
                         metavar="DELTA",
                         help="Also the impressions needed to detect a preference of DELTA "
                         "(e.g. 0.02) at --alpha with --power, from this log's outcomes."),
            click.option("--power", type=number(0, 1, low_open=True, high_open=True),
                         default=0.8, show_default=True, help="Power the plan asks for."),
            option("alpha"))):
        f = decorator(f)
    return f


@interleave.command(name="score", cls=Subcommand)
@click.argument("log", metavar="LOG")
@_method
@click.option("--clicks", type=click.Choice(CLICK_RULES), default="all",
              show_default=True, help="Which clicks give credit: all, or each impression's "
              "last (the latest in time, else the lowest on the list).")
@click.option("--min-dwell", type=number(0), metavar="SECONDS",
              help="Count only clicks with at least this dwell time (needs a dwell column).")
@click.option("--by", type=click.Choice(INTERLEAVE_GROUPS), default="query",
              show_default=True, help="The unit the bootstrap resamples whole: impressions "
              "of one query (or user) are not independent.")
@click.option("--correction", type=click.Choice(CORRECTIONS),
              default="holm", show_default=True,
              help="Multiple-comparison correction over the pairs of a multileaving.")
@_gates
@option("confidence")
@option("rounds")
@option("seed")
@click.option("--column", "column", multiple=True, metavar="ROLE=NAME",
              help="The log's column for a role (impression, query, user, position, item, "
              "team, clicked, action, dwell, timestamp) when no default name or alias "
              "finds it (repeatable).")
@click.option("--log-format", metavar="FORMAT", help="Format of LOG (default: from its "
              "extension): csv, tsv, parquet, jsonl.")
@option("html")
@option("delimiter")
@option("encoding")
@tracker_options
@report_options("interleave")
def score_command(log, **kw) -> int:
    """Judge an interleaving LOG: which team users preferred, by how much, and how sure.

    LOG has one row per shown slot: impression (impression_id; UBI's query_id), position
    (UBI's ordinal), item (UBI's object_id), team (team-draft), clicked (1/0), and the query
    or user it belongs to; optional dwell and timestamp; p_<team> chances (probabilistic) or
    rank_<team> ranks (balanced). An event log with action_name (UBI: impression rows for the
    slots shown, click rows for the clicks) is read too.

    \b
    Examples:
      rankeval interleave score clicks.csv
      rankeval interleave score ubi_events.jsonl --clicks last --min-dwell 10
      rankeval interleave score clicks.parquet --plan 0.02 -f json
      rankeval interleave score clicks.csv --baseline main --fail-if-worse
      rankeval interleave score clicks.csv --mlflow    # Delta per pair, its interval, p
    """
    from rankeval.api.interleave import score  # --help's import cost: numpy, scipy

    check_html(kw["fmt"].lower(), kw["html"])
    columns = {}
    for text in kw["column"]:
        role, sep, name = text.partition("=")
        if not sep or not role.strip() or not name.strip():
            raise click.BadParameter(f"{text!r}: expected ROLE=NAME, e.g. "
                                     "impression=request_id", param_hint="--column")
        columns[role.strip()] = name.strip()
    trackers = open_trackers(kw)
    result = score(log, method=kw["method"], clicks=kw["clicks"], min_dwell=kw["min_dwell"],
                   by=kw["by"], level=kw["confidence"], rounds=kw["rounds"], seed=kw["seed"],
                   correction=kw["correction"], baseline=kw["baseline"],
                   fail_if_worse=kw["fail_if_worse"], non_inferior=kw["non_inferior"],
                   plan=kw["plan"], alpha=kw["alpha"], power=kw["power"],
                   log_format=kw["log_format"], columns=columns, reading=Reading.take(kw),
                   config=config_in_use(click.get_current_context()))
    emit(kw["output"], kw["fmt"].lower(), "interleave", result)
    write_html(kw["html"], "interleave", result)
    step_summary(result, "interleave")
    for gate in result.gates:
        if not gate.passed or not kw["quiet"]:
            click.echo(f"rankeval: {gate.message()}", err=True)
    # the verdict said first; a tracker's failure then exits 2, over a gate's 1
    log_to(trackers, result, kw["quiet"])
    return 0 if result.passed else EXIT_GATE_FAILED


def _chances(text: str | None, flag: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected comma-separated chances, e.g. "
                                 "0.05,0.3,0.5,0.7,0.95", param_hint=flag) from None


@interleave.command(name="simulate", cls=Subcommand)
@click.argument("runs", metavar="RUN_A RUN_B [RUN...]", nargs=-1, required=True)
@click.argument("truth", metavar="QRELS")
@click.option("--click-model", type=click.Choice(CLICK_MODELS), default="cascade",
              show_default=True, help="cascade (one click, Craswell et al. 2008), pbm "
              "(position-based) or dcm (dependent click model, Guo et al. 2009).")
@click.option("--user", type=click.Choice(CLICK_USERS), default="navigational", show_default=True,
              help="The simulated user's chances by grade 0-4 (Hofmann et al. 2011): "
              "perfect, navigational, informational.")
@click.option("--click", "click_chances", metavar="P0,P1,...",
              help="P(click | examined, grade) per grade, over --user's.")
@click.option("--stop", metavar="P0,P1,...",
              help="P(stop | click, grade) per grade (dcm; cascade: 1 for every grade).")
@click.option("--examine", metavar="P1,P2,...",
              help="P(examined) per position (pbm; default 1/position).")
@_method
@_slots
@_tau
@click.option("--impressions", type=number(1, 10_000_000, integer=True), default=1000,
              show_default=True, help="Impressions per simulated experiment.")
@click.option("--trials", type=number(1, 100_000, integer=True), default=100,
              show_default=True, help="Simulated experiments.")
@option("seed", help="Seed of the queries drawn, the interleavings and the clicks.")
@_names
@click.option("--metric", metavar="NAME@K",
              help="The offline metric reported beside (default ndcg@K).")
@option("alpha")
@click.option("--power", type=number(0, 1, low_open=True, high_open=True), default=0.8,
              show_default=True, help="Power the impressions needed ask for.")
@option("preds_format", help="Format of every RUN (default: each from its extension).")
@option("truth_format")
@option("html")
@option("delimiter")
@option("encoding")
@report_options("interleave")
def simulate_command(runs, truth, **kw) -> int:
    """Simulate interleaving experiments offline: queries drawn from those QRELS judges,
    their interleaved lists clicked by a simulated user whose chances follow the grades.
    Reports each pair's expected Delta, its spread over trials, the impressions needed, and
    each run's offline metric beside it.

    \b
    Examples:
      rankeval interleave simulate main.csv candidate.csv qrels.txt
      rankeval interleave simulate a.run b.run c.run qrels.txt --click-model dcm --seed 3
      rankeval interleave simulate a.csv b.csv qrels.csv --click-model pbm --user perfect
    """
    from rankeval.api.interleave import simulate  # --help's import cost: numpy, scipy

    check_html(kw["fmt"].lower(), kw["html"])
    result = simulate(list(runs), truth, click_model=kw["click_model"], user=kw["user"],
                      click=_chances(kw["click_chances"], "--click"),
                      stop=_chances(kw["stop"], "--stop"),
                      examine=_chances(kw["examine"], "--examine"), method=kw["method"],
                      k=kw["k"], tau=kw["tau"], impressions=kw["impressions"],
                      trials=kw["trials"], seed=kw["seed"], names=list(kw["names"]) or None,
                      metric=kw["metric"], alpha=kw["alpha"], power=kw["power"],
                      run_format=kw["preds_format"], truth_format=kw["truth_format"],
                      reading=Reading.take(kw),
                      config=config_in_use(click.get_current_context()))
    emit(kw["output"], kw["fmt"].lower(), "interleave", result)
    write_html(kw["html"], "interleave", result)
    step_summary(result, "interleave")
    return 0
