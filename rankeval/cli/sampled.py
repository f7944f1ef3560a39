"""``rankeval sampled``: metrics of held-out items ranked among sampled negatives, corrected
toward the full ranking (Krichene and Rendle 2020)."""

from __future__ import annotations

import click

from rankeval.cli.app import cli, warn
from rankeval.cli.emit import emit
from rankeval.cli.options import (
    Command,
    option,
    pop_columns,
    pop_reading,
    report_options,
)


@cli.command(name="sampled", cls=Command)
@click.argument("runs", metavar="RUN [RUN...]", nargs=-1, required=True)
@click.option("--candidates", type=click.IntRange(min=2), required=True, metavar="N",
              help="How many items each held-out item would be ranked among in full (the "
              "catalogue the negatives were drawn from, the item included).")
@click.option("--negatives", type=click.IntRange(min=1), required=True, metavar="M",
              help="How many negatives were sampled for each held-out item.")
@click.option("-m", "--metrics", default="hit_rate,ndcg,mrr,auc", show_default=True,
              metavar="LIST", help="Metrics of one held-out item: hit_rate (recall), "
              "precision, ndcg, mrr (ap), auc; comma-separated.")
@click.option("-k", "--k", "ks", default="10", show_default=True, metavar="K[,K...]",
              help="Cut-offs of hit_rate, precision, ndcg and mrr.")
@click.option("--gamma", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="The bias-variance correction's weight of variance: 0 the least bias, 1 "
              "the posterior mean (Krichene and Rendle found 0.1 ordered runs best).")
@click.option("--sampling", type=click.Choice(["without", "with"]), default="without",
              show_default=True, help="Negatives drawn without replacement (distinct), or "
              "with replacement (the paper's binomial model).")
@click.option("--name", "names", multiple=True, help="A name per run, in order (default: "
              "the file names).")
@option("preds_format", help="Format of every RUN (default: each from its extension).")
@click.option("--user-col", "user_col", metavar="NAME", help="Column name, when the default "
              "and its aliases are not in the file. Default user_id.")
@click.option("--item-col", "item_col", metavar="NAME", help="Column name, when the default "
              "and its aliases are not in the file. Default item_id.")
@click.option("--rank-col", "rank_col", metavar="NAME", help="The column of the sampled "
              "rank, when the default and its aliases are not in the file. Default rank.")
@option("delimiter")
@option("encoding")
@report_options("sampled")
def sampled_command(runs, **kw) -> int:
    """Metrics of held-out items each ranked among --negatives sampled negatives, as
    sampled and corrected toward the full ranking among --candidates items.

    Each RUN has one row per held-out item: user, item and rank (its rank among itself and
    its sampled negatives, 1 = top). The report gives every metric as sampled, at the
    expected full rank (rank estimate), and with Krichene and Rendle's bias-variance
    correction; it warns when a correction orders two runs the other way.

    \b
    Examples:
      rankeval sampled ranks.csv --candidates 3706 --negatives 100
      rankeval sampled a.csv b.csv --candidates 3706 --negatives 100 -m ndcg -k 10,20
      rankeval sampled ranks.parquet --candidates 50000 --negatives 999 --gamma 0 -f json
    """
    from rankeval.analysis.sampled import estimate
    from rankeval.errors import OptionError
    from rankeval.io.load import load_predictions, open_input
    from rankeval.io.output import check_distinct, check_writable

    check_writable(kw["output"], "--output")
    check_distinct({"--output": kw["output"]}, list(runs))
    names = list(kw["names"]) or list(runs)
    if len(names) != len(runs):
        raise OptionError(f"{len(names)} names for {len(runs)} runs")
    metrics = _metrics(kw["metrics"], kw["ks"])
    columns, reading = pop_columns(kw), pop_reading(kw)
    ranks = {}
    for name, path in zip(names, runs, strict=True):
        table = open_input(path, "predictions", kw["preds_format"], reading)
        preds = load_predictions(table, columns.get("user_col"), columns.get("item_col"),
                                 columns.get("rank_col"), None, None)
        if preds.rank is None:
            raise OptionError(f"{path}: no rank column: each row is a held-out item with its "
                              "rank among the sampled negatives")
        ranks[name] = preds.rank
    result = estimate(ranks, metrics, kw["candidates"], kw["negatives"], kw["gamma"],
                      kw["sampling"] == "with")
    if not kw["quiet"]:
        from rankeval.report.sampled import grouped

        for (label, a, b), how in grouped(result.flips).items():
            warn(f"{label}: {a} and {b} swap places under the {' and the '.join(how)} "
                 f"correction{'s' if len(how) > 1 else ''}: the sampled metric may order them "
                 "the wrong way")
    emit(kw["output"], kw["fmt"].lower(), "sampled", result)
    return 0


def _metrics(text: str, ks: str) -> list[tuple[str, int | None]]:
    from rankeval.analysis.sampled import METRICS
    from rankeval.errors import OptionError

    aliases = {"recall": "hit_rate", "hr": "hit_rate", "ap": "mrr", "map": "mrr"}
    try:
        cutoffs = [int(k) for k in ks.split(",")]
    except ValueError:
        cutoffs = []
    if not cutoffs or min(cutoffs) < 1:
        raise OptionError(f"-k takes whole numbers from 1, comma-separated, got {ks!r}")
    out: list[tuple[str, int | None]] = []
    for word in text.split(","):
        name = aliases.get(word.strip().lower(), word.strip().lower())
        if name not in METRICS:
            raise OptionError(f"-m: unknown metric {word!r} (known: {', '.join(METRICS)})")
        out += [(name, None)] if name == "auc" else [(name, k) for k in cutoffs]
    return out
