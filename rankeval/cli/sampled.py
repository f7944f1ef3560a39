"""``rankeval sampled``: metrics of held-out items ranked among sampled negatives, corrected
toward the full ranking (Krichene and Rendle 2020)."""

from __future__ import annotations

import click

from rankeval.analysis.choices import MAX_CANDIDATES, MAX_NEGATIVES
from rankeval.cli.app import cli, warn
from rankeval.cli.config import config_in_use
from rankeval.cli.emit import emit
from rankeval.cli.options import Command, option, pop_columns, report_options
from rankeval.cli.param_types import CUTOFFS
from rankeval.io.formats import TRUTH_CHOICES
from rankeval.io.options import Reading
from rankeval.io.output import check_distinct, check_writable


@cli.command(name="sampled", cls=Command)
@click.argument("runs", metavar="RUN [RUN...] [TRUTH]", nargs=-1, required=True)
@click.option("--candidates", type=click.IntRange(2, MAX_CANDIDATES), metavar="N",
              help="How many items each held-out item would be ranked among in full (the "
              "catalogue the negatives were drawn from, the item included). Or each one's "
              "own: --candidates-col, --candidates-file.")
@click.option("--candidates-col", metavar="NAME",
              help="Each held-out item's own number of candidates: this column of every RUN "
              "(on the item's row), or of --candidates-file (default there: candidates).")
@click.option("--candidates-file", metavar="FILE",
              help="Each user's own number of candidates: a user column and a candidates "
              "column (--candidates-col names another), any input format.")
@click.option("--candidates-format", type=click.Choice(TRUTH_CHOICES, case_sensitive=False),
              help="Format of --candidates-file (default: from the extension, else from the "
              "content).")
@click.option("--negatives", type=click.IntRange(1, MAX_NEGATIVES), metavar="M",
              help="How many negatives were sampled for each held-out item (with TRUTH: "
              "read from the runs).")
@click.option("--truth", "old_truth", metavar="FILE", hidden=True,
              help="The old spelling of TRUTH (the last positional).")
@option("truth_format")
@click.option("--ties", type=click.Choice(["expected", "optimistic", "pessimistic"]),
              default="expected", show_default=True, help="With TRUTH: a negative scored "
              "the same as the held-out item ranks above it (pessimistic), below it "
              "(optimistic), or either way with equal chance (expected).")
@click.option("-m", "--metrics", default="hit_rate,ndcg,mrr,auc", show_default=True,
              metavar="LIST", help="Metrics of one held-out item: hit_rate (recall), "
              "precision, ndcg, mrr (ap), auc; comma-separated.")
@click.option("-k", "--k", "ks", type=CUTOFFS, default="10", show_default=True,
              metavar="K[,K...]",
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
@click.option("--score-col", "score_col", metavar="NAME", help="With TRUTH: the column of "
              "the scores, when the default and its aliases are not in the file. Default "
              "score.")
@click.option("--relevance-col", "relevance_col", metavar="NAME", help="The truth's "
              "relevance column, when the default and its aliases are not in the file. "
              "Default relevance.")
@option("delimiter")
@option("decimal")
@option("encoding")
@report_options("sampled")
def sampled_command(runs, **kw) -> int:
    """Metrics of held-out items each ranked among --negatives sampled negatives, as
    sampled and corrected toward the full ranking among --candidates items.

    Each RUN has one row per held-out item: user, item and rank (its rank among itself and
    its sampled negatives, 1 = top). Or, with TRUTH last naming the held-out items (a file
    without a rank or score column, relevance > 0), each RUN holds the scores of every
    user's held-out items and sampled negatives. The report gives
    every metric as sampled, at the expected full rank (rank estimate), and with Krichene
    and Rendle's bias-variance correction; it warns when a correction orders two runs the
    other way.

    \b
    Examples:
      rankeval sampled ranks.csv --candidates 3706 --negatives 100
      rankeval sampled a.csv b.csv --candidates 3706 --negatives 100 -m ndcg -k 10,20
      rankeval sampled scores.csv heldout.csv --candidates 3706
      rankeval sampled ranks.parquet --candidates 50000 --negatives 999 --gamma 0 -f json
    """
    from rankeval.api.sampled import sampled  # --help's import cost: numpy, pyarrow

    columns, reading = pop_columns(kw), Reading.take(kw)
    runs, kw["truth"] = _runs_and_truth(list(runs), kw.pop("old_truth"), kw["truth_format"],
                                        reading)
    check_writable(kw["output"], "--output")
    check_distinct({"--output": kw["output"]}, [*runs, *([kw["truth"]] if kw["truth"] else []),
                                                *filter(None, [kw["candidates_file"]])])
    result = sampled(list(runs), kw["candidates"], kw["negatives"], truth=kw["truth"],
                     candidates_col=kw["candidates_col"],
                     candidates_file=kw["candidates_file"],
                     candidates_format=kw["candidates_format"],
                     metrics=kw["metrics"], k=kw["ks"], gamma=kw["gamma"],
                     sampling=kw["sampling"], ties=kw["ties"], names=kw["names"] or None,
                     preds_format=kw["preds_format"], truth_format=kw["truth_format"],
                     columns=columns, reading=reading,
                     config=config_in_use(click.get_current_context()))
    if not kw["quiet"]:
        from rankeval.report.sampled import grouped  # --help's import cost: numpy, pyarrow

        for line in result.warnings:
            warn(line)
        for (label, a, b), how in grouped(result.flips).items():
            warn(f"{label}: {a} and {b} swap places under the {' and the '.join(how)} "
                 f"correction{'s' if len(how) > 1 else ''}: the sampled metric may order them "
                 "the wrong way")
    emit(kw["output"], kw["fmt"].lower(), "sampled", result)
    return 0


def _runs_and_truth(files: list[str], old: str | None, truth_format: str | None,
                    reading) -> tuple[list[str], str | None]:
    """The runs, and the truth last as every command takes it: the last of two or more
    files when it has no rank or score column (a run of sampled ranks or of scores has one).
    The old ``--truth FILE`` is taken with a warning."""
    from rankeval.io.roles import guess_role  # --help's import cost: pyarrow

    if old is not None:
        warn("sampled --truth FILE is now the last positional (RUN [RUN...] TRUTH); the old "
             "spelling will be removed")
        return files, old
    if len(files) >= 2 and guess_role(files[-1], truth_format, reading,
                                      "{opt:truth_format}") != "predictions":
        return files[:-1], files[-1]
    return files, None
