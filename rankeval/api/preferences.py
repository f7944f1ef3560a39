"""Preferences as the truth (``preferences``; trec_eval's -R prefs and -R qrels_prefs): the run
scored by trec_eval's prefs_* measures (``kernels.preferences``), for ``rankeval score`` and
``rankeval.evaluate``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rankeval.build.checks import report_duplicates
from rankeval.engines.registry import get
from rankeval.errors import InputError, OptionError
from rankeval.foreign_names import PREFERENCE_CONVENTIONS
from rankeval.io.options import Columns, ExtraInputs
from rankeval.io.preferences import codes, load
from rankeval.kernels.preferences import (
    MEASURES,
    Inconsistent,
    measures,
    number,
    repeated_in_lists,
)
from rankeval.presets import preset_of
from rankeval.results.preferences import COUNTED, PreferenceEvaluation
from rankeval.settings import ROWS, Settings, make_settings

# trec_eval 9.0.8 under -c: a query of the preferences missing from the run counts in num_q
# and the means' divisor, but is never scored (no lines, nothing in the counts' sums); 10.0
# scores it with an empty list
UNLISTED_APART = frozenset({"trec_eval-9"})

# the settings the preferences read: the lists' depth, the queries missing from the run, the
# repeated documents; trec_eval's -J and -l, which its prefs_* measures ignore; and the
# judgment groups, refused with them (``foreign_names.preference_words``)
READS = frozenset({"preferences", *PREFERENCE_CONVENTIONS, "judged_only", "relevance_threshold",
                   "judgment_groups"})

# trec_eval 9.0.8 holds scores and levels as C floats (10.0: doubles): ties and order follow
SINGLE = frozenset({"trec_eval-9"})


def preference_evaluation(predictions: Any, truth: Any, metrics: Any, k: Any,
                          options: Mapping[str, Any], engine: str = "local",
                          reading: Mapping[str, Any] | None = None) -> PreferenceEvaluation:
    """``rankeval.evaluate``'s and ``rankeval score``'s run under ``preferences``: the verb's
    keywords (``api.request.Options``) read as ``request`` reads them; what preferences do not
    read (a K, the extra inputs, another engine) is refused, never dropped."""
    rest = dict(options)
    if not get(engine).in_process:
        raise OptionError(f"{{opt:preferences}} is read by the local engine only: drop --engine "
                          f"{engine}", "preferences")
    unread = [name for name in ROWS if name not in READS and rest.get(name) is not None]
    if unread:
        raise OptionError(f"{{opt:{unread[0]}}} changes no prefs_* measure: drop it with "
                          "{opt:preferences}", "preferences")
    preds_format, truth_format = rest.pop("preds_format", None), rest.pop("truth_format", None)
    columns, extras = Columns.take(rest), ExtraInputs.take(rest)
    given = sorted(extras.given())
    if given:
        raise OptionError(f"{{opt:{given[0]}}} is not read by {{opt:preferences}}: trec_eval's "
                          "prefs_* measures read the run and the preferences alone", "preferences")
    if k not in (None, [], ()):
        raise OptionError("{opt:k}: trec_eval's prefs_* measures have no cut-off (the lists' "
                          "depth is {opt:max_depth})", "preferences")
    settings = make_settings(metrics, None, compat=rest.pop("compat", None),
                             config=rest.pop("config", None), **rest)
    return evaluate_preferences(predictions, truth, settings, columns, preds_format,
                                truth_format, reading)


def evaluate_preferences(predictions: Any, truth: Any, settings: Settings,
                         columns: Mapping[str, str | None] | None = None,
                         preds_format: str | None = None, truth_format: str | None = None,
                         reading: Mapping[str, Any] | None = None) -> PreferenceEvaluation:
    """The prefs_* measures ``settings.preference_measures`` asks for, per query and over the
    queries: the queries of the preferences that the run lists (all of them, an unlisted one
    with an empty list, unless ``skip_missing_users``), in their ids' byte order."""
    preds, prefs = load(predictions, truth, columns, preds_format, truth_format, reading)
    preset = preset_of(settings.compat)
    if preset is not None and not preset.comments:  # trec_eval 9.0.8 stops on them
        for label, line in ((prefs.label, prefs.comment),
                            (preds.source.label, preds.source.comment)):
            if line is not None:
                raise InputError(label, f"line {line} is a '#' comment line, which "
                                 f"{preset.tool.split(' (')[0]} refuses ('Malformed line'); "
                                 "--compat trec_eval (10.0) reads it as a comment")
    negative = np.flatnonzero(prefs.level < 0)
    rnonrel = [m for m in settings.preference_measures if "Rnonrel" in m]
    if len(negative) and rnonrel:
        row = int(negative[0])
        raise InputError(prefs.label, f"a negative level, which {rnonrel[0]} cannot weigh: "
                         "trec_eval's Rnonrel measures take the lowest level for the "
                         "non-relevant (0) and read past it when a negative one is lower; "
                         "drop those measures or the negative levels", count=len(negative),
                         examples=[(int(prefs.line[row]), f"{prefs.level[row]:g}")],
                         unit="line")
    single = settings.compat in SINGLE
    precision = np.float32 if single else np.float64
    (pq, rq), queries = codes(prefs.user, preds.user.combine_chunks())
    (pd_, rd), docs = codes(prefs.item, preds.item.combine_chunks())
    (group,), _ = codes(prefs.group)
    (subgroup,), _ = codes(prefs.subgroup)
    n_queries, n_docs = len(queries), max(len(docs), 1)
    assert preds.score is not None  # io.preferences.load refuses a run without scores
    score = np.asarray(preds.score, dtype=np.float64).astype(precision)
    judged_queries = np.unique(pq)
    listed = np.isin(rq, judged_queries)  # only the judged queries' lists are read
    repeated = repeated_in_lists(rq[listed], rd[listed], score[listed], n_docs,
                                 settings.max_depth)
    rows = np.flatnonzero(listed)[repeated]
    if len(rows) and not settings.dedupe:
        report_duplicates(preds, rows, "{opt:dedupe} keeps the best-ranked one")
    keep = np.ones(len(rq), dtype=bool)
    keep[rows] = False
    ranked = number(rq[keep], rd[keep], score[keep], pq, pd_, n_queries, n_docs,
                    settings.max_depth)
    try:
        values = measures(pq, group, subgroup, prefs.level.astype(precision), ranked,
                          n_queries)
    except Inconsistent as exc:
        line = int(prefs.line[exc.row])
        raise InputError(prefs.label, f"{exc.why} (trec_eval stops on it)", count=1,
                         examples=[(line, f"{prefs.user[exc.row]} {prefs.group[exc.row]} "
                                          f"{prefs.item[exc.row]}")], unit="line") from None
    listed_queries = np.intersect1d(judged_queries, np.unique(rq))
    evaluated = listed_queries if settings.skip_missing_users else judged_queries
    if not len(evaluated):
        raise InputError(prefs.label, "no query has both preferences and a list in the run "
                         "(trec_eval: no queries with both results and relevance info)")
    counted = len(evaluated)  # num_q, and the means' divisor
    if settings.compat in UNLISTED_APART:  # 9.0.8 -c: the unlisted counted, never scored
        evaluated = listed_queries
    asked = [m for m in MEASURES if m in settings.preference_measures]
    per_query = {m: values[m][evaluated] for m in asked}
    # summed query by query in their order, as trec_eval accumulates them
    metrics = {m: float(np.cumsum(v)[-1]) if len(v) else 0.0 for m, v in per_query.items()}
    metrics = {m: v if m in COUNTED else v / counted for m, v in metrics.items()}
    tag = preds.source.tag
    runid = tag if tag is not None else ("stdin" if preds.source.path == "-"
                                         else Path(preds.source.path).name.split(".")[0])
    users = [str(q) for q in queries.take(evaluated).to_pylist()]
    return PreferenceEvaluation(settings=settings, users=users,
                                values=per_query, metrics=metrics, runid=runid,
                                queries=counted,
                                layout=prefs.layout)
