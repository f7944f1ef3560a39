"""Where each option of each command is listed in ``--help``: the option groups, as data.

Every option belongs to exactly one named group (``tests/test_help_groups.py``): a command's
common options first (``COMMON``), then the jobs in ``ORDER``. An option's group comes from
the first of: the command's common options, the command's own row in ``BY_COMMAND``, the
shared ``BY_OPTION`` table, and the tables the options are made from (every settings row is a
convention, every column and extra input an input, every engine's option an engine's). Old
spellings, hidden, sit in a hidden group. cloup (option groups) draws the sections when help
is asked for (``helptext``); the commands' decorator lists stay as they are.
"""

from __future__ import annotations

import click

from rankeval.engines import ENGINES
from rankeval.io.columns import COLUMNS
from rankeval.io.options import ExtraInputs, Reading
from rankeval.settings import TABLE

COMMON_TITLE = "Common options"
INPUTS = "Inputs and columns"
METRICS = "Metrics"
CONVENTIONS = "Conventions"
USERS = "Users and segments"
STATISTICS = "Statistics"
GATES = "Gates"
GOLD = "Machine judgments"
REPORTS = "Reports"
ENGINE = "Engines"
OLD = "Old spellings"  # hidden: they warn and fill in their new option

# The order of the sections after the common options.
ORDER = (INPUTS, METRICS, CONVENTIONS, USERS, STATISTICS, GATES, GOLD, REPORTS, ENGINE)

# Each command's options a first run needs, in the order listed.
COMMON: dict[str, tuple[str, ...]] = {
    "score": ("k", "metrics", "fmt", "output", "per_user", "fail_under"),
    "validate": ("k", "metrics", "strict", "fmt", "output"),
    "compare": ("k", "metrics", "baseline_run", "names", "fmt", "output", "per_user"),
    "power": ("effect", "k", "metrics", "alpha", "power_", "fmt", "output"),
    "sampled": ("candidates", "metrics", "ks", "fmt", "output"),
    "ope": ("estimators", "names", "fmt", "output", "fail_under"),
    "agree": ("runs", "names", "k", "metrics", "fmt", "output"),
    "convert": ("kind", "input_format", "output_format"),
    "metrics": ("fmt",),
    "config": ("fmt",),
    "interleave make": ("method", "k", "seed", "output"),
    "interleave score": ("method", "clicks", "by", "fmt", "output"),
    "interleave simulate": ("click_model", "user", "method", "k", "impressions", "seed"),
}

# Options whose job is the same in every command that has them.
BY_OPTION: dict[str, str] = {
    **{s.name: CONVENTIONS for s in TABLE},
    "compat": CONVENTIONS,
    **{f"{c}_col": INPUTS for c in COLUMNS},
    **{name: INPUTS for name in (*ExtraInputs.names(), *Reading.names())},
    "preds_format": INPUTS, "truth_format": INPUTS, "input_format": INPUTS,
    "output_format": INPUTS, "kind": INPUTS, "truth": INPUTS,
    "zscores": INPUTS,  # a settings row (its table puts it above), but a file read
    "k": METRICS, "metrics": METRICS, "ks": METRICS,
    "per_user": USERS, "per_query": USERS, "no_summary": USERS, "segments": USERS,
    "segment_by": USERS, "segment_bins": USERS, "top_changes": USERS,
    "intervals": STATISTICS, "confidence": STATISTICS, "rounds": STATISTICS,
    "seed": STATISTICS, "alpha": STATISTICS, "test": STATISTICS, "correction": STATISTICS,
    "correct_across": STATISTICS,
    "stats": STATISTICS,
    "fail_under": GATES, "fail_over": GATES, "max_gap": GATES, "baseline": GATES,
    "max_drop": GATES, "allow_settings_change": GATES, "non_inferior": GATES,
    "equivalent": GATES, "baseline_per_user": GATES, "junit": GATES,
    "fail_if_worse": GATES, "min_effect": GATES,
    "gold": GOLD, "gold_format": GOLD, "ppi_lambda": GOLD, "gold_strata": GOLD,
    "gold_plan": GOLD,
    "fmt": REPORTS, "output": REPORTS, "html": REPORTS, "names": REPORTS, "tag": REPORTS,
    "mlflow": REPORTS, "wandb": REPORTS, "config": REPORTS, "quiet": REPORTS,
    "verbose": REPORTS, "debug": REPORTS,
    "engine": ENGINE, **{name: ENGINE for e in ENGINES.values() for name in e.options},
}

# A command's own options, and shared ones whose job differs there.
BY_COMMAND: dict[str, dict[str, str]] = {
    "score": {"alpha": GATES},  # the level of --non-inferior and --equivalent
    "compare": {"baseline_run": METRICS, "all_pairs": STATISTICS, "rbo": METRICS},
    "validate": {"strict": GATES},
    "power": {"per_user_a": INPUTS, "per_user_b": INPUTS, "effect": STATISTICS,
              "power_": STATISTICS, "alternative": STATISTICS, "method": STATISTICS,
              "systems": STATISTICS},
    "sampled": {"candidates": METRICS, "negatives": METRICS, "gamma": METRICS,
                "sampling": METRICS, "candidates_col": INPUTS, "candidates_file": INPUTS,
                "candidates_format": INPUTS},
    "ope": {"estimators": METRICS, "clip": METRICS, "reward_model": INPUTS,
            "per_context": USERS, "log_format": INPUTS, "run_format": INPUTS,
            "reward_model_format": INPUTS, "fail_under": GATES},
    "agree": {"runs": INPUTS},
    "interleave make": {"method": METRICS, "tau": METRICS, "output_format": REPORTS},
    "interleave score": {"method": METRICS, "clicks": METRICS, "min_dwell": METRICS,
                         "by": STATISTICS, "column": INPUTS, "log_format": INPUTS,
                         "plan": STATISTICS, "power": STATISTICS, "alpha": GATES},
    "interleave simulate": {"click_model": METRICS, "user": METRICS,
                            "click_chances": METRICS, "stop": METRICS, "examine": METRICS,
                            "method": METRICS, "tau": METRICS, "impressions": STATISTICS,
                            "trials": STATISTICS, "metric": METRICS, "power": STATISTICS},
}


def group_of(command: str, param: click.Option) -> str:
    """The title of the group ``param`` (an option of ``command``) is listed under."""
    name = param.name or ""
    if param.hidden:
        return OLD
    if name in COMMON.get(command, ()):
        return COMMON_TITLE
    found = BY_COMMAND.get(command, {}).get(name) or BY_OPTION.get(name)
    if found is None:
        raise LookupError(f"option {name!r} of {command!r} has no group in rankeval.cli.groups")
    return found


# ``--help`` of each group of commands: its commands by job, keyed by the group's path
# ("" is ``rankeval`` itself, "interleave" is ``rankeval interleave``).
SECTIONS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "": (
        ("Evaluate", ("score", "validate", "compare", "agree", "interleave")),
        ("Plan and estimate", ("power", "sampled", "ope")),
        ("Files and reference", ("convert", "metrics", "config")),
    ),
    "interleave": (
        ("Run an experiment", ("make", "score")),
        ("Plan offline", ("simulate",)),
    ),
}
