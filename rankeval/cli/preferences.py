"""``rankeval score --preferences``: trec_eval's prefs_* measures (-R prefs, -R qrels_prefs),
printed as trec_eval prints them (-f trec) or as JSON. Scored apart from the metrics
(``api.preferences``): an option the preferences do not read is refused, never ignored."""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

from rankeval.cli.options import pop_options
from rankeval.engines import ENGINES
from rankeval.errors import OptionError
from rankeval.io.formats import STDOUT
from rankeval.io.options import Columns, ExtraInputs, Reading
from rankeval.io.output import check_distinct, check_writable, write_text
from rankeval.settings import TABLE

# what score reads under --preferences (beyond the library's keywords, which the settings
# check): the report, trec_eval's -q and -n, the input formats' reading
READ = frozenset({"fmt", "output", "per_query", "no_summary", "quiet", "verbose", "debug",
                  "config", "metrics", "k", "engine", *Reading.names()})
# the library's keywords, which api.preferences checks; the engines' own options are not
ENGINE_OPTIONS = frozenset(name for e in ENGINES.values() for name in e.options)
LIBRARY = frozenset({*(s.name for s in TABLE), "compat", "preds_format", "truth_format",
                     *Columns.names(), *ExtraInputs.names()})
FORMATS = ("trec", "json")
_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT, ParameterSource.DEFAULT_MAP)


def score_preferences(predictions: Any, truth: Any, kw: dict[str, Any]) -> int:
    """Score, print, exit 0 (errors raise: exit 2)."""
    # --help's import cost: numpy, pyarrow
    from rankeval.api.preferences import preference_evaluation
    from rankeval.report import preferences as report  # --help's import cost: numpy

    ctx = click.get_current_context()
    unread = [name for name, value in kw.items() if name not in READ | LIBRARY
              and ctx.get_parameter_source(name) in _GIVEN and value not in (None, False, ())]
    options = {n: v for n, v in pop_options(kw).items() if n not in ENGINE_OPTIONS}
    if unread:
        raise OptionError(f"{{opt:{unread[0]}}} is not read by {{opt:preferences}}: it prints "
                          "trec_eval's prefs_* measures alone (-f trec or json)", "preferences")
    fmt, output = kw["fmt"].lower(), kw["output"]
    if fmt not in FORMATS:
        raise OptionError(f"{{opt:fmt}} {fmt}: {{opt:preferences}} prints -f trec (trec_eval's "
                          "lines) or json", "preferences")
    if (kw["per_query"] or kw["no_summary"]) and fmt != "trec":
        raise OptionError("{opt:per_query} and {opt:no_summary} are -f trec's lines",
                          "preferences")
    check_writable(output, "--output")
    check_distinct({"--output": output}, [str(p) for p in (predictions, truth) if p != "-"])
    result = preference_evaluation(predictions, truth, list(kw["metrics"]) or None,
                                   list(kw["k"]) or None, options, engine=kw["engine"],
                                   reading=Reading.take(kw))
    text = (report.render(result, kw["per_query"], not kw["no_summary"]) if fmt == "trec"
            else report.render_json(result))
    if output == STDOUT:
        click.echo(text, nl=False)
    else:
        write_text(output, text)
    return 0
