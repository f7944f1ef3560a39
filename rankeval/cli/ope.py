"""``rankeval ope``: what new ranking policies would have earned on a log of what users did."""

from __future__ import annotations

import click

from rankeval.cli.app import cli, warn
from rankeval.cli.config import config_in_use, say_verdicts
from rankeval.cli.emit import emit, step_summary
from rankeval.cli.options import (
    Command,
    column_options,
    option,
    pop_columns,
    report_options,
    setting_option,
)
from rankeval.cli.param_types import number
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable, write_per_user


def _ope_columns(f):
    return column_options(f, roles=("log", "predictions", "policy", "reward_model"))


@cli.command(name="ope", cls=Command)
@click.argument("log", metavar="LOG")
@click.argument("runs", metavar="RUN [RUN...]", nargs=-1, required=True)
@click.option("-e", "--estimators", metavar="LIST",
              help="Estimators to report, comma-separated: sips, iips, rips, snsips, sniips, "
              "snrips, dm, cascade_dr (slates); ips, snips, dm, dr (a log of single slots). "
              "Default: every one the inputs allow.")
@click.option("--clip", type=number(0, low_open=True), metavar="W",
              help="Clip every importance weight at W (lower variance, some bias); the "
              "report says how far clipping moved each estimate.")
@click.option("--reward-model", metavar="FILE",
              help="Predicted rewards (slate_id, user or both, position, item, "
              "predicted_reward) for the direct method and the doubly robust estimators.")
@click.option("--name", "names", multiple=True,
              help="A name per run, in order (default: the file names).")
@click.option("--fail-under", multiple=True, metavar="ESTIMATOR=VALUE",
              help="Gate: exit 1 when a run's estimate is below VALUE (repeatable), e.g. "
              "--fail-under snips=0.031.")
@click.option("--per-context", metavar="FILE",
              help="Also write each slate's (or user's) share of every estimate: .csv, "
              ".parquet, or - for stdout.")
@option("confidence")
@option("rounds")
@option("seed")
@setting_option("ties")
@click.option("--log-format", metavar="FORMAT", help="Format of LOG (default: from its "
              "extension).")
@click.option("--run-format", metavar="FORMAT", help="Format of every RUN (default: each "
              "from its extension).")
@click.option("--reward-model-format", metavar="FORMAT",
              help="Format of --reward-model (default: from its extension).")
@_ope_columns
@option("delimiter")
@option("decimal")
@option("encoding")
@report_options("ope")
def ope_command(log, runs, **kw) -> int:
    """Estimate what each RUN (a new ranking policy) would have earned on the slates LOG
    records, off-policy, with intervals and diagnostics that say when not to trust them.

    LOG has one row per shown slot: user (and slate_id, one per showing), position (1 = top),
    item, reward, and the logging policy's propensity of the item at that position
    (propensity), of the slate's top k (cascade_propensity) or of the whole slate
    (slate_propensity). A RUN is a ranked run (user, item, rank or score), sampled rankings
    (a sample column: the policy that draws one of them), or the policy's probabilities
    (slate_id, user or both, position, item, probability, cascade_probability,
    slate_probability, conditional_probability).

    \b
    Examples:
      rankeval ope log.csv candidate.csv
      rankeval ope log.parquet main.csv candidate.csv --clip 100 -f json
      rankeval ope log.csv candidate.csv --reward-model q_hat.parquet -e sniips,cascade_dr
      rankeval ope log.csv candidate.csv --fail-under snrips=0.031 -f markdown
    """
    from rankeval.api.ope import ope  # --help's import cost: numpy, pyarrow

    check_writable(kw["output"], "--output")
    if kw["per_context"] is not None:
        check_writable(kw["per_context"], "--per-context")
    check_distinct({"--output": kw["output"], "--per-context": kw["per_context"]},
                   [log, *runs, *([kw["reward_model"]] if kw["reward_model"] else [])])
    columns, reading = pop_columns(kw), Reading.take(kw)
    result = ope(log, list(runs), names=list(kw["names"]) or None,
                 estimators=kw["estimators"], clip=kw["clip"],
                 reward_model=kw["reward_model"], level=kw["confidence"],
                 rounds=kw["rounds"], seed=kw["seed"], ties=kw["ties"],
                 fail_under=kw["fail_under"], log_format=kw["log_format"],
                 run_format=kw["run_format"], reward_model_format=kw["reward_model_format"],
                 reading=reading, config=config_in_use(click.get_current_context()),
                 **{k: v for k, v in columns.items() if v is not None})
    if not kw["quiet"]:
        for run in result.runs:
            for line in run.warnings:
                warn(line)
    if kw["per_context"] is not None:
        write_per_user(result.per_context(), kw["per_context"])
    emit(kw["output"], kw["fmt"].lower(), "ope", result,
         to_stderr=kw["per_context"] == "-" and kw["output"] == "-")
    step_summary(result, "ope")
    return say_verdicts(result.verdicts, result.passed, kw["quiet"])
