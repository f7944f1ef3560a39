"""The option vocabulary of every command: one definition per option, so the same flag means
the same thing everywhere. Settings options derive from ``conventions.TABLE``, column options from
``inputs.COLUMNS``, format choices from the format registries. Old spellings stay as hidden
aliases that warn (``RENAMED``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from rankeval.analysis.choices import CORRECTIONS, FAMILIES, MAX_ROUNDS, TESTS
from rankeval.cli.app import GroupedCommand, flag, warn
from rankeval.cli.config import config_in_use, config_option, verbose_option
from rankeval.cli.memory import for_one_run
from rankeval.cli.param_types import (
    CUTOFFS,
    MAX_SEED,
    EngineChoice,
    RowValue,
    number,
)
from rankeval.engines import ENGINES
from rankeval.io.columns import COLUMNS, OPE_ROLES, ROLES
from rankeval.io.formats import ALL_CHOICES, PREDS_CHOICES, TRUTH_CHOICES
from rankeval.io.options import OWN, Columns, ExtraInputs
from rankeval.registry import DEFAULT_METRICS
from rankeval.report import choices as report_choices
from rankeval.settings import COMPAT, PRESETS, ROWS, TABLE, UNSET

RENAMED_KEY = "rankeval.renamed"


class Command(GroupedCommand):
    """A command whose old option spellings (hidden) fill in the new ones, with a warning;
    once its options are parsed (not for ``--help``), the process's allocators are set up."""

    def invoke(self, ctx: click.Context):
        for_one_run()
        for name, value in ctx.meta.get(RENAMED_KEY, {}).items():
            if ctx.get_parameter_source(name) not in (ParameterSource.COMMANDLINE,
                                                      ParameterSource.ENVIRONMENT):
                ctx.params[name] = value
        return super().invoke(ctx)


def _given(value: Any) -> bool:
    return value not in (None, (), False)


def _renamed(old: str, name: str, **kwargs: Any) -> Callable:
    """A hidden ``old`` spelling of the option ``name``."""

    def remember(ctx: click.Context, param, value):
        if _given(value):
            ctx.meta.setdefault(RENAMED_KEY, {})[name] = value
            warn(f"{old} is now {flag(name)}; the old spelling will be removed")

    kwargs = {k: v for k, v in kwargs.items() if k not in ("help", "show_default", "default")}
    return click.option(old, f"_old_{name}_{old.strip('-').replace('-', '_')}", hidden=True,
                        expose_value=False, callback=remember, **kwargs)


Spec = tuple[tuple[str, ...], dict[str, Any]]  # (flags, click keyword arguments)


def _format(given: str, of: str, choices) -> Spec:
    """The format option of an input (``--truth`` -> ``--truth-format``), ``of`` its name in
    the help."""
    return ((f"{given}-format",), dict(
        type=click.Choice(choices, case_sensitive=False),
        help=f"Format of {of} (default: from the extension, else from the content)."))


def _input(name: str, help: str) -> dict[str, Spec]:
    """The two options of an extra input file: ``--train FILE`` and its format,
    ``--train-format``."""
    given = flag(name)
    return {name: ((given,), dict(metavar="FILE", help=help)),
            f"{name}_format": _format(given, given, TRUTH_CHOICES)}


def _own(name: str, what: str, why: str = "", **kwargs: Any) -> dict[str, Spec]:
    """The run's and the truth's own option over the reading option ``name`` (a row of
    ``io.options.OWN``); ``why``, said once, on the first."""
    sides = {"predictions": f"the predictions alone, over {flag(name)}{why}",
             "truth": f"TRUTH alone, over {flag(name)}"}
    return {own: ((flag(own),), dict(kwargs, help=f"{what} of {sides[role]}."))
            for role, own in OWN[name].items()}


# name -> (flags, click keyword arguments). The parameter name is the library's name.
SPECS: dict[str, Spec] = {
    "k": (("-k", "--k"), dict(multiple=True, metavar="K[,K...]", type=CUTOFFS,
                              help="Cut-off(s): repeat or comma-separate (--k 5 --k 10, "
                              "--k 5,10,20), or a range (--k 1..20, --k 10..100:10). "
                              "Each K at most 1,000,000,000. Default 10.")),
    "metrics": (("-m", "--metrics"), dict(
        multiple=True, metavar="NAME[@K]",
        help="Metrics to compute: repeat or comma-separate; NAME alone takes every K. "
        "Every name: rankeval metrics; one explained: rankeval metrics NAME. "
        f"Default: {', '.join(DEFAULT_METRICS)}.")),
    "compat": (("--compat",), dict(
        type=click.Choice(COMPAT, case_sensitive=False),
        help="Every convention as one tool computes it ("
        + "; ".join(f"{p.name}: {p.tool}" for p in PRESETS.values())
        + "); a setting given too overrides its preset. trec_eval: AP over R, relevance >= 1, "
        "users without relevant items scored 0, users missing from the run left out unless "
        "--no-skip-missing-users as with -c, lists ordered by score and never by a rank "
        "column, trec ties, RBP p 0.9 graded, recall levels rounded, and trec_eval measure "
        "names in -m (P.5,10  map  ndcg_cut.10  recip_rank  Rprec  success.10); ir_measures: "
        "its measure strings (nDCG@10  P(rel=2)@5  AP). Each preset's values: the "
        "conventions page of the docs.")),
    "preds_format": _format("--preds", "the predictions", PREDS_CHOICES),
    "truth_format": _format("--truth", "TRUTH", TRUTH_CHOICES),
    **_input("train", "Training interactions (user, item, optional count): for --exclude-seen "
             "and the popularity metrics (arp, long_tail, novelty); also the catalog when "
             "--catalog is not given."),
    **_input("catalog", "The item universe, one item per row (coverage, gini, norm_entropy)."),
    **_input("item_features", "Per-item vectors (numeric columns, or a list column in "
             "Parquet) or tags ('drama|comedy'), one row per item: for ild and serendipity."),
    **_input("item_groups", "Which group each item belongs to (an item column and one or "
             "more group columns: provider, language, ...; an item on several rows is in each "
             "group): for awrf."),
    **_input("propensity", "Each item's probability of being observed (an item column and a "
             "propensity column), or each (user, item) pair's with a user column: for "
             "ips_recall, ips_precision, ips_dcg and ips_ndcg written without gamma=."),
    **_input("exclude", "(user, item) pairs to mask from the ranked lists before the cut "
             "(items seen in training and validation, ...), apart from --train, which then "
             "feeds only the popularity metrics unless --exclude-seen masks its pairs too."),
    "delimiter": (("--delimiter",), dict(
        metavar="CHAR", help="Field separator of CSV inputs (default: comma; a header with "
        "semicolons and no comma is read with ';'); '\\t' or tab for a tab.")),
    **_own("delimiter", "Field separator", metavar="CHAR"),
    "decimal": (("--decimal",), dict(
        type=click.Choice([".", ","]), help="Decimal mark of the numbers of CSV and TSV "
        "inputs (default '.'; ',' reads 0,75 as 0.75).")),
    **_own("decimal", "Decimal mark", type=click.Choice([".", ","])),
    "tag_separator": (("--tag-separator",), dict(
        metavar="TEXT", help="What separates the tags of a text column of --item-features "
        "(default '|': drama|comedy; a RecBole token_seq column: a space).")),
    **_own("encoding", "Text encoding", " (a run and its truth written by different systems)",
           metavar="NAME"),
    "encoding": (("--encoding",), dict(
        metavar="NAME", help="Text encoding of the inputs (default utf-8; UTF-16 is known by "
        "its byte-order mark), e.g. latin-1.")),
    "output": (("-o", "--output"), dict(default="-", show_default=True, metavar="FILE",
                                        help="Write the report to FILE (- for stdout).")),
    "quiet": (("-q", "--quiet"), dict(is_flag=True, help="Do not print warnings.")),
    "debug": (("--debug",), dict(is_flag=True,
                                 help="Show the Python traceback of an unexpected error.")),
    "seed": (("--seed",), dict(type=number(0, MAX_SEED, integer=True), default=0,
                               show_default=True, metavar="N",
                               help="Seed of the resampling (bootstrap, randomization).")),
    "rounds": (("--rounds",), dict(type=number(1, MAX_ROUNDS, integer=True), default=10_000,
                                   show_default=True, metavar="N",
                                   help="Resamples of the bootstrap and randomization.")),
    "confidence": (("--confidence",), dict(type=number(0, 1, low_open=True, high_open=True),
                                           default=0.95, show_default=True,
                                           help="Confidence level of the intervals.")),
    "segments": (("--segments",), dict(
        metavar="FILE", help="A user table (user column + attributes, any input format) to "
        "break every metric down by --segment-by.")),
    "segment_by": (("--segment-by",), dict(
        multiple=True, metavar="COLUMN[:BINS]", help="A column of --segments to break the "
        "metrics down by (repeatable); COLUMN:quartiles, :deciles or :N cuts a numeric one "
        "into quantile bins.")),
    "stats": (("--stats",), dict(
        metavar="LIST", help="Also the distribution of each metric over users: any of mean, "
        "median, p10 (any percentile pN), p90, std, min, max, zeros (share of users at 0), "
        "comma-separated; e.g. --stats median,p10,p90,zeros.")),
    "segment_bins": (("--segment-bins",), dict(
        metavar="BINS", help="Cut every --segment-by column given without :BINS into quantile "
        "bins: quartiles, deciles or N (the columns must be numeric).")),
    "html": (("--html",), dict(
        metavar="FILE", help="Also write the report as one static HTML page with charts "
        "(beside -f/-o; needs rankeval[report]).")),
    "intervals": (("--intervals", "--ci"), dict(
        is_flag=True, help="Add a bootstrap confidence interval (over users) to every mean.")),
    "alpha": (("--alpha",), dict(type=number(0, 1, low_open=True, high_open=True),
                                 default=0.05, show_default=True,
                                 help="Significance level of the tests.")),
    "correct_across": (("--correct-across",), dict(
        type=click.Choice(FAMILIES), default="pairs", show_default=True,
        help="The family --correction corrects over: pairs, the tests of one metric@K (a "
        "family per metric and K); metrics, every test of every metric and K of the report "
        "at once (fewer false discoveries over a report of many metrics, less power).")),
    "non_inferior": (("--non-inferior",), dict(
        multiple=True, metavar="METRIC=MARGIN[%]",
        help="Gate: exit 1 unless shown not worse than the baseline by more than MARGIN "
        "(absolute, or % of the baseline's mean): the one-sided (1 - alpha) lower bound of "
        "the paired difference lies above -MARGIN (repeatable).")),
    "equivalent": (("--equivalent",), dict(
        multiple=True, metavar="METRIC=MARGIN[%]",
        help="Gate: exit 1 unless shown within MARGIN of the baseline either way (two "
        "one-sided tests, TOST, at alpha) (repeatable).")),
    "engine": (("--engine",), dict(
        type=EngineChoice(), default="local",
        show_default=True, help="Where to compute: " + "; ".join(
            f"{e.name}: {e.help}" for e in ENGINES.values()) + ".")),
    **{name: spec for e in ENGINES.values() for name, spec in e.options.items()},
    "input_format": _format("--input", "IN", ALL_CHOICES),
    "output_format": (("--output-format",), dict(
        type=click.Choice(ALL_CHOICES, case_sensitive=False),
        help="Format of OUT (default: from the extension; required for -).")),
}

# Old spelling -> the option that replaced it (kept hidden; using it warns).
RENAMED = {
    "--ci-level": "confidence",
    "--ci-rounds": "rounds",
    "--runs-format": "preds_format",
    "--from": "input_format",
    "--to": "output_format",
}


def option(name: str, *, command: str | None = None, **override: Any) -> Callable:
    """The shared option ``name`` (with any hidden old spellings of it)."""
    flags, kwargs = SPECS[name]
    kwargs = {**kwargs, **override}
    renamed = [_renamed(old, name, **kwargs) for old, new in RENAMED.items() if new == name]
    return stack(click.option(*flags, name, **kwargs), *renamed)


def report_format(command: str) -> Callable:
    """``-f/--format`` with the report formats ``command`` offers (from the report registry)."""
    return click.option("-f", "--format", "fmt", type=click.Choice(report_choices(command),
                        case_sensitive=False), default="table", show_default=True,
                        help="Report format.")


def _setting_option(s) -> Callable:
    names = (flag(s.name), s.name)
    text = s.text(flag)  # other options named by their flags
    if s.is_flag and s.trec_eval is not UNSET:  # a preset to turn off: --no-...
        return click.option(f"{flag(s.name)}/--no-{flag(s.name)[2:]}", s.name, default=None,
                            help=text)
    if s.is_flag:
        return click.option(*names, is_flag=True, default=None, help=text)
    if s.choices is not None:
        return click.option(*names, type=click.Choice(s.choices, case_sensitive=False),
                            help=f"{text} Default {s.default}.")
    default = "" if s.default is None else f" Default {s.default:g}."
    span = getattr(s.parse, "span", None)
    within = f" Range {span}." if span else ""
    return click.option(*names, type=RowValue(s), metavar=s.metavar,
                        help=text + within + default)


def setting_option(name: str) -> Callable:
    """The option of one row of the settings table (for commands that take only some)."""
    return _setting_option(ROWS[name])


def settings_options(f):
    """One option per row of the settings table, and --compat."""
    for s in reversed(TABLE):
        f = _setting_option(s)(f)
    return option("compat")(f)


_SCORING_ROLES = tuple(role for role in ROLES if role not in OPE_ROLES)


def column_options(f, roles: tuple[str, ...] = _SCORING_ROLES):
    """--user-col ... --count-col, from the column map (only the columns of ``roles``)."""
    wanted = {c for role in roles for part in ROLES[role] for c in part}
    for column, (default, _) in reversed(COLUMNS.items()):
        if column not in wanted:
            continue
        f = click.option(f"--{column.replace('_', '-')}-col", f"{column}_col", metavar="NAME",
                         help="Column name, when the default and its aliases are not in the "
                         f"file. Default {default}.")(f)
    return f


def stack(*decorators: Callable) -> Callable:
    """Several option decorators as one, listed in ``--help`` in the order given."""

    def apply(f):
        for d in reversed(decorators):
            f = d(f)
        return f

    return apply


def scoring_options(preds_help: str | None = None) -> Callable:
    """What every command that scores or checks inputs takes: -k, -m, the settings, the
    columns and the input formats."""
    preds = {"help": preds_help} if preds_help else {}
    return stack(option("k"), option("metrics"), settings_options, column_options,
                  option("preds_format", **preds), option("truth_format"), option("train"),
                  option("catalog"), option("item_features"), option("item_groups"),
                  option("propensity"), option("exclude"), option("train_format"),
                  option("catalog_format"), option("item_features_format"),
                  option("item_groups_format"), option("propensity_format"),
                  option("exclude_format"),
                  option("delimiter"), option("preds_delimiter"), option("truth_delimiter"),
                  option("decimal"), option("preds_decimal"), option("truth_decimal"),
                  option("encoding"), option("preds_encoding"), option("truth_encoding"),
                  option("tag_separator"))


def scored_inputs(f):
    """PREDS TRUTH and the options of scoring them: what score and validate take first."""
    return stack(click.argument("predictions", metavar="PREDS"),
                 click.argument("truth", metavar="TRUTH"), scoring_options())(f)


def engine_options(f):
    """--engine and every engine's own options (the Spark engine's --spark-master, ...)."""
    return stack(option("engine"), *(option(name) for e in ENGINES.values()
                                      for name in e.options))(f)


def per_user_options(f):
    """score's per-user outputs: --per-user FILE, and trec_eval's -q and -n."""
    return stack(
        click.option("--per-user", metavar="FILE",
                     help="Also write one row per evaluated user: .csv, .parquet, or - for "
                     "stdout (with --engine spark or ray: a directory, written as a Parquet "
                     "dataset)."),
        click.option("--per-query", is_flag=True,
                     help="With --format trec: a line per user and measure before the 'all' "
                     "lines (trec_eval's -q)."),
        click.option("--no-summary", is_flag=True,
                     help="With --format trec or ir_measures: no 'all' lines (trec_eval's -n); "
                     "with --per-query its lines alone, without it nothing."))(f)


def gate_options(f):
    """score's quality gates (``api.score.GateOptions``) and --junit, their report."""
    return stack(
        click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
                     help="Gate: exit 1 when METRIC's mean is below VALUE (repeatable; also "
                     "'ndcg@10>=0.35')."),
        click.option("--fail-over", multiple=True, metavar="METRIC=VALUE",
                     help="Gate: exit 1 when METRIC's mean is above VALUE (repeatable)."),
        click.option("--max-gap", multiple=True, metavar="METRIC=VALUE",
                     help="Gate with --segments/--segment-by: exit 1 when METRIC's largest gap "
                     "between segments (best mean - worst) exceeds VALUE (repeatable)."),
        click.option("--baseline", metavar="REPORT.json",
                     help="A JSON report of an earlier run (-f json -o FILE) to compare with."),
        click.option("--max-drop", multiple=True, metavar="[METRIC=]DROP[%]",
                     help="Gate against --baseline: exit 1 when METRIC falls more than DROP "
                     "(absolute, or relative with %); without METRIC, for every metric in both "
                     "reports."),
        click.option("--allow-settings-change", is_flag=True,
                     help="Compare with a --baseline computed with other settings."),
        option("non_inferior", help="Gate against --baseline-per-user: exit 1 unless this run "
               "is shown not worse than the baseline by more than MARGIN (absolute, or % of "
               "the baseline's mean): the one-sided (1 - alpha) lower bound of the paired "
               "difference lies above -MARGIN (repeatable)."),
        option("equivalent", help="Gate against --baseline-per-user: exit 1 unless this run "
               "is shown within MARGIN of the baseline either way (two one-sided tests, TOST) "
               "(repeatable)."),
        click.option("--baseline-per-user", metavar="FILE",
                     help="The baseline run's per-user values (its --per-user file), for "
                     "--non-inferior and --equivalent: the users are paired by id."),
        option("alpha", help="Significance level of --non-inferior and --equivalent."),
        click.option("--junit", metavar="FILE",
                     help="Also write the gates as JUnit XML test cases."))(f)


def tracker_options(f):
    """--mlflow and --wandb: where else a score is logged."""
    return stack(
        click.option("--mlflow", is_flag=True,
                     help="Also log the metrics, settings and reports to MLflow: the active "
                     "run, or a new one in MLFLOW_EXPERIMENT_NAME at MLFLOW_TRACKING_URI "
                     "(default a local SQLite file); needs rankeval[mlflow]."),
        click.option("--wandb", is_flag=True,
                     help="Also log the metrics, settings and per-user values to Weights & "
                     "Biases: the active run, or a new one in WANDB_PROJECT (offline unless "
                     "WANDB_MODE or WANDB_API_KEY says otherwise); needs rankeval[wandb]."))(f)


def segment_options(f):
    """--segments, --segment-by, --segment-bins: the metrics by user segment."""
    return stack(option("segments"), option("segment_by"), option("segment_bins"))(f)


def breakdown_options(f):
    """score's additions after scoring: --html, the segments, --stats, the intervals."""
    return stack(option("html"), segment_options, option("stats"), option("intervals"),
                  option("confidence"), option("rounds"), option("seed"))(f)


def test_options(f):
    """compare's paired tests: --test, --rounds, --seed, --alpha, --correction,
    --correct-across."""
    return stack(
        click.option("--test", type=click.Choice(TESTS), default="t", show_default=True,
                     help="Paired significance test over users."),
        option("rounds"), option("seed"),
        option("alpha", help="Significance level, after the correction."),
        click.option("--correction", type=click.Choice(CORRECTIONS), default="holm",
                     show_default=True, help="Multiple-comparison correction across the "
                     "runs (per metric, or see --correct-across): family-wise (holm, "
                     "bonferroni) or false discovery rate (bh: Benjamini-Hochberg; by: "
                     "Benjamini-Yekutieli, for any dependence)."),
        option("correct_across"))(f)


def pop_options(kw: dict[str, Any]) -> dict[str, Any]:
    """The library's keywords among a command's (removed from ``kw``): the settings,
    --compat, the formats, the columns, the extra inputs, and every engine's options (what
    ``api.request.request`` takes as ``options``)."""
    names = [*(s.name for s in TABLE), "compat", "preds_format", "truth_format",
             *Columns.names(), *ExtraInputs.names(),
             *(name for e in ENGINES.values() for name in e.options)]
    # the configuration file the options came from, if any: every report names it
    config = config_in_use(click.get_current_context())
    return {name: kw.pop(name) for name in names if name in kw} | (
        {"config": config} if config else {})


def report_options(command: str) -> Callable:
    """How a command reports: -f (its formats), -o, --config, -q, -v, --debug."""
    return stack(report_format(command), option("output"), config_option, option("quiet"),
                  verbose_option, option("debug"))


def pop_settings(kw: dict[str, Any]) -> dict[str, Any]:
    """The settings-table values of a command's keyword arguments (removed from ``kw``)."""
    return {s.name: kw.pop(s.name) for s in TABLE}


def pop_columns(kw: dict[str, Any]) -> dict[str, str | None]:
    """--user-col ...: the column names a command takes (the scoring ones are
    ``io.options.Columns``; ``rankeval ope`` has its own)."""
    return {f"{c}_col": kw.pop(f"{c}_col") for c in COLUMNS if f"{c}_col" in kw}


