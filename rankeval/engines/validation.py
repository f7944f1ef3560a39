"""``rankeval validate``: every problem and every count of two inputs, without scoring them.

It runs the same stages as ``score`` (load, then build) inside ``collecting()``, so every
check reports instead of raising, and the counts and warnings are those ``score`` would give.
What it gives back, ``Validation``, lives in ``results/validation.py`` (imported here too, the
path the Spark and Ray engines name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

from rankeval.build.items import item_stats
from rankeval.build.samples import expand, groups
from rankeval.build.stages import build
from rankeval.engines.partition import judgement_notices, unevaluable, user_notices
from rankeval.engines.sampled import no_corpus_metrics, user_counts
from rankeval.errors import InputError, collecting
from rankeval.io.columns import EXTRA
from rankeval.io.extras import Extras, check_needs, load_extras
from rankeval.io.load import Predictions, Truth, load_predictions, load_truth, open_input
from rankeval.io.readers import Source
from rankeval.io.roles import swapped
from rankeval.registry import reads
from rankeval.results.validation import Validation
from rankeval.settings import Settings


def validate_inputs(
    predictions: Any,
    truth: Any,
    settings: Settings,
    *,
    preds_format: str | None = None,
    truth_format: str | None = None,
    columns: Mapping[str, str | None] | None = None,
    acknowledged: frozenset[str] = frozenset(),
    reading: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Validation:
    """Read both inputs (and ``extra``: train, catalog and their formats) and run every check
    of ``score``, collecting problems, not stopping."""
    cols = columns or {}
    result = Validation(acknowledged=acknowledged, config=settings.config)
    extra = extra or {}
    check_needs(settings, {n for n in EXTRA if extra.get(n) is not None})
    with collecting() as problems:
        extras = _load(problems, lambda: load_extras(extra, cols, reading))
        run_table = _load(problems, lambda: open_input(predictions, "predictions", preds_format,
                                                       reading))
        truth_table = _load(problems, lambda: open_input(truth, "truth", truth_format, reading))
        if run_table is not None and truth_table is not None:
            _load(problems, lambda: swapped(run_table, truth_table))
        run: Predictions | None = run_table and _load(
            problems, lambda: load_predictions(run_table, cols))
        judged: Truth | None = truth_table and _load(
            problems, lambda: load_truth(truth_table, cols, reads(settings.specs, "subtopics")))
        for role, data in (("predictions", run), ("truth", judged)):
            if data is not None:
                s = data.source
                result.inputs[role] = {"path": s.path, "format": s.format, "rows": s.rows,
                                       "columns": data.columns}
        for role in EXTRA:
            data = getattr(extras, role, None)
            if data is not None:
                s = data.source
                result.inputs[role] = {"path": s.path, "format": s.format, "rows": s.rows,
                                       "columns": data.columns}
        if run is not None and judged is not None:
            _check_join(result, problems, run, judged, settings, extras)
    result.errors = problems
    return result


def validate_file(data: Any, role: str, settings: Settings, *, fmt: str | None = None,
                  columns: Mapping[str, str | None] | None = None,
                  reading: Mapping[str, Any] | None = None) -> Validation:
    """One run (``role`` "predictions") or truth file alone, with every check ``validate`` and
    ``score`` make of it (the pre-commit hook's check): the other side is made of the file's
    own distinct (user, item) pairs, so that every user is evaluated and every list ordered
    and checked, and only this file can have problems."""
    cols = columns or {}
    result = Validation()
    with collecting() as problems:
        table = _load(problems, lambda: open_input(data, role, fmt, reading))
        loaded: Predictions | Truth | None = None
        if table is not None and role == "predictions":
            loaded = _load(problems, lambda: load_predictions(table, cols))
        elif table is not None:
            loaded = _load(problems,
                           lambda: load_truth(table, cols, reads(settings.specs, "subtopics")))
        if loaded is not None:
            s = loaded.source
            result.inputs[role] = {"path": s.path, "format": s.format, "rows": s.rows,
                                   "columns": loaded.columns}
            other = "truth" if role == "predictions" else "predictions"
            result.inputs[other] = {}
            if isinstance(loaded, Predictions):
                _check_join(result, problems, loaded, _own_truth(loaded), settings)
            else:
                _check_join(result, problems, _own_run(loaded), loaded, settings)
    result.errors = problems
    return result


def _pairs(data: Predictions | Truth) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """The distinct (user, item) pairs of an input, as two columns of its own types."""
    table = pa.Table.from_arrays([data.user, data.item], names=["user", "item"]).group_by(
        ["user", "item"], use_threads=False).aggregate([])
    return table.column("user"), table.column("item")


def _own_truth(run: Predictions) -> Truth:
    """A truth judging each of the run's pairs relevant: every user of the run evaluated."""
    user, item = _pairs(run)
    return Truth(user, item, np.ones(len(user)), Source("<the run's own pairs>", "memory",
                                                         len(user)),
                 {"user": "user", "item": "item"})


def _own_run(truth: Truth) -> Predictions:
    """A run listing each of the truth's pairs once, in no particular order."""
    user, item = _pairs(truth)
    return Predictions(user, item, None, None, Source("<the truth's own pairs>", "memory",
                                                      len(user)),
                       {"user": "user", "item": "item"})


def _load(problems: list[InputError], load):
    try:
        return load()
    except InputError as exc:  # unreadable: nothing more to learn from this file
        problems.append(exc)
        return None


def _check_join(result: Validation, problems, preds: Predictions, truth: Truth, settings: Settings,
                extras: Extras | None = None):
    try:
        extras = extras or Extras()
        stats = item_stats(extras, preds, settings)
        sampled = None
        if preds.sample is not None:  # a stochastic run: checked per (user, sample)
            no_corpus_metrics(settings, preds)
            preds, truth, sampled = expand(preds, truth, settings)
        built = build(preds, truth, settings, extras, stats)
    except InputError as exc:
        problems.append(exc)
        return
    c = built.counts
    if sampled is not None:  # users counted once, however many samples they have
        c = user_counts(built, groups(sampled, built.users), sampled)
    result.users = c
    result.notices = [*built.notices,
                      *user_notices(c, settings, preds.source.label, truth.source.label),
                      *judgement_notices(truth, settings)]
    result.rows_beyond_k = built.prediction_rows_beyond_k
    result.inputs["predictions"]["users"] = c.in_predictions
    result.inputs["truth"]["users"] = c.in_truth
    error = unevaluable(c, settings, truth.source.label, preds.source.label)
    if error is not None:
        problems.append(error)
