"""``score --gold``'s options (one group) and the request they make (#48, SPEC §12):
TRUTH is machine-judged, the gold file human-judged for a uniform random sample of its
queries; the verb is ``api.gold``."""

from __future__ import annotations

from typing import Any

import click

from rankeval.cli.options import stack
from rankeval.cli.param_types import number
from rankeval.errors import OptionError
from rankeval.io.formats import TRUTH_CHOICES


def _estimator_options() -> list:
    return [
        click.option("--gold-format", type=click.Choice(TRUTH_CHOICES, case_sensitive=False),
                     help="Format of the --gold file (default: --truth-format's, else from "
                     "the extension)."),
        click.option("--ppi-lambda", type=number(0, 1), metavar="LAMBDA",
                     help="With --gold: a fixed weight of the machine judgments instead of "
                     "PPI++'s tuned one: 1 classic PPI, 0 the gold sample alone."),
        click.option("--gold-strata", metavar="COLUMN",
                     help="With --gold: TRUTH's column naming each query's stratum, the gold "
                     "sample drawn uniformly within each (rates may differ): stratified PPI "
                     "(Fisch et al. 2024). Each stratum needs two gold queries."),
    ]


# --gold, --gold-format, --ppi-lambda, --gold-strata, --gold-plan
gold_options = stack(
    click.option("--gold", metavar="FILE",
                 help="Human judgments (qrels) of a uniform random sample of TRUTH's "
                 "queries, TRUTH being machine-judged (an LLM's): per metric the report "
                 "adds the PPI++ estimate with its interval (at --confidence), the "
                 "gold-only and machine-only means, the judge's bias and the gold "
                 "queries the machine judgments were worth; the gates judge the PPI "
                 "estimate. Read like TRUTH (its columns, --truth-format)."),
    *_estimator_options(),
    click.option("--gold-plan", type=number(0, low_open=True), metavar="HALF_WIDTH",
                 help="With --gold: the gold queries the observed variances call for to "
                 "reach an interval of this half-width, gold alone and with PPI."),
)
# compare's --gold, --gold-format, --ppi-lambda, --gold-strata
compare_gold_options = stack(
    click.option("--gold", metavar="FILE",
                 help="Human judgments (qrels) of a uniform random sample of TRUTH's "
                 "queries, TRUTH being machine-judged (an LLM's): each run's difference "
                 "from the baseline is also estimated by PPI++ from the per-query "
                 "differences, with its interval (at --confidence) and p-value "
                 "(corrected by --correction), and the report says where it and the "
                 "machine-only comparison disagree on the sign or on significance. Read "
                 "like TRUTH (its columns, --truth-format)."),
    *_estimator_options(),
)


def gold_request(kw: dict[str, Any], job, engine, outputs: dict[str, str | None]):
    """The ``api.gold.GoldRequest`` of the options (None without --gold), checked before any
    input is read; no output may be the gold file."""
    given = [n for n in ("gold_format", "ppi_lambda", "gold_strata", "gold_plan")
             if kw.get(n) is not None]
    if kw.get("gold") is None:
        if given:
            raise OptionError(f"{{opt:{given[0]}}} is for {{opt:gold}} FILE: give one")
        return None
    from rankeval.api.gold import GoldRequest  # --help's import cost: numpy, pyarrow
    from rankeval.io.output import check_distinct

    request = GoldRequest(kw["gold"], kw["gold_format"], kw["ppi_lambda"], kw["gold_strata"],
                          kw["confidence"], kw["gold_plan"])
    request.check(job, engine)
    check_distinct({k: v for k, v in outputs.items() if v and "://" not in v}, [kw["gold"]])
    return request

