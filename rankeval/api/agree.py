"""``agree(human, machine, runs=...)`` -> an ``Agreement`` (``rankeval agree``): how far a
machine judge's qrels agree with human qrels. Both are read here, their pairs matched over one
dictionary of ids, and the labels of the pairs both judged handed to ``analysis/agreement.py``;
each run is read once and evaluated under each qrels by the path ``compare`` takes
(``engines.finish.evaluate_inputs``), the queries every evaluation holds kept, and each
metric's per-query values handed over as matrices."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.analysis.agreement import Ordering, labels, ordering, pair_up
from rankeval.analysis.choices import check_tests
from rankeval.analysis.significance import correct_within, family_of
from rankeval.api.request import refuse_judgment_groups
from rankeval.build.checks import report_duplicates
from rankeval.engines.finish import evaluate_inputs
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.columns import COLUMN_OPTIONS, EXTRA
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.extras import check_needs, load_extras
from rankeval.io.load import Truth, load_predictions, load_truth, open_input
from rankeval.io.roles import swapped
from rankeval.io.run_names import run_names
from rankeval.notices import Notice
from rankeval.registry import CORPUS, REGISTRY, reads
from rankeval.results.agreement import Agreement, Side
from rankeval.settings import make_settings


def agree(
    human: Any,
    machine: Any,
    runs: Sequence[Any] | Mapping[str, Any] | None = None,
    metrics: Any = None,
    k: Any = None,
    *,
    names: Sequence[str] | None = None,
    test: str = "t",
    rounds: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
    correct_across: str = "pairs",
    compat: str | None = None,
    human_format: str | None = None,
    machine_format: str | None = None,
    preds_format: str | None = None,
    reading: Mapping[str, Any] | None = None,
    **options: Any,
) -> Agreement:
    """How far ``machine`` qrels agree with ``human`` qrels (paths or in-memory tables, as
    ``evaluate`` takes the truth).

    On the (query, item) pairs both judged: the confusion matrix, Cohen's kappa (unweighted,
    linear, quadratic), Krippendorff's alpha (nominal, ordinal, interval), the machine's
    precision and recall per grade and at ``relevance_threshold`` (relevant: relevance >= T;
    default > 0); the pairs and queries only one side judged are counted. With ``runs``
    (paths or tables, named by ``names`` or the file stems; or a mapping name -> run): per
    metric (``metrics``, ``k``, as ``evaluate``), each run's value under each qrels over the
    queries both evaluate for every run, Kendall's tau-b, tau_AP (human ordering the
    reference), Spearman's rho, the pairs of runs the machine orders the other way with
    ``compare``'s paired ``test`` under the human qrels (``rounds``, ``seed``; corrected by
    ``correction`` over the swaps of a metric, or of every metric with ``correct_across=
    "metrics"``, significant at ``alpha``), and the per-query
    correlation of the metric. Every other keyword is ``evaluate``'s (settings, column names,
    ``train``, ...).

    >>> a = agree("human.qrels", "llm.qrels", ["bm25.run", "dense.run"], "ndcg@10")
    >>> a.labels.kappa["quadratic"], a.ordering("ndcg@10").kendall_tau
    """
    check_tests(test, correction, correct_across, rounds)
    if not 0 < alpha < 1:
        raise OptionError("{option} must lie strictly between 0 and 1", "alpha")
    rest = dict(options)
    columns = {name: rest.pop(name, None) for name in COLUMN_OPTIONS}
    extra = {n: rest.pop(n, None) for n in (*EXTRA, *(f"{n}_format" for n in EXTRA))}
    settings = make_settings(metrics, k, compat=compat, **rest)
    refuse_judgment_groups(settings)
    corpus = [str(s) for s in settings.specs if REGISTRY[s.name].scope == CORPUS]
    if runs is not None and corpus:
        raise OptionError(f"{corpus[0]} is a corpus-level metric: one value per run and no "
                          "per-query values; agree orders runs by per-query metrics")
    check_needs(settings, {n for n in EXTRA if extra[n] is not None})
    labelled, paths = _named(runs, names)
    tables = [open_input(q, "truth", f, reading) for q, f in ((human, human_format),
                                                               (machine, machine_format))]
    subtopics = reads(settings.specs, "subtopics")
    h_truth, m_truth = (load_truth(t, columns, subtopics=subtopics) for t in tables)
    result = _labels(h_truth, m_truth, settings.relevance_threshold)
    result.config = settings.config
    if not paths:
        return result
    extras = load_extras(extra, columns, reading)
    per_user = [s for s in settings.specs if REGISTRY[s.name].scope != CORPUS]
    evaluations = []
    for name, run in zip(labelled, paths, strict=True):
        table = open_input(run, "predictions", preds_format, reading)
        swapped(table, tables[0])
        preds = load_predictions(table, columns)
        evaluations.append((name, [evaluate_inputs(preds, truth, settings, extras)
                                   for truth in (h_truth, m_truth)]))
    shared, counts = _shared_queries(evaluations)
    result.runs = {name: _path(run, name) for name, run in zip(labelled, paths, strict=True)}
    result.queries = counts
    result.options = {"test": test, "alpha": alpha, "correction": correction,
                      "correct_across": correct_across,
                      "rounds": rounds, "seed": seed}
    for side, key in (("human", "human_beyond"), ("machine", "machine_beyond")):
        if counts[key]:
            result.notices.append(Notice("agree_queries_beyond", counts[key], {"side": side}))
    for spec in per_user:
        h, m = (np.vstack([_aligned(evs[i], spec, shared) for _, evs in evaluations])
                for i in (0, 1))
        result.orderings.append(ordering(spec, labelled, h, m, test, rounds, seed, alpha,
                                         correction))
    if correct_across != "pairs":
        result.orderings = swaps_across(result.orderings, correction, correct_across, alpha)
    return result


def swaps_across(orderings: list[Ordering], correction: str, across: str,
                 alpha: float) -> list[Ordering]:
    """The swaps' p-values corrected over the family ``across`` names (``metrics``: the
    swaps of every metric at once) instead of each metric's, significance redone."""
    swaps = [(o.metric, s) for o in orderings for s in o.swaps]
    adjusted = iter(correct_within([s.p_value for _, s in swaps],
                                   [family_of(m, across) for m, _ in swaps], correction))
    out = []
    for o in orderings:
        redone = []
        for s in o.swaps:
            p = next(adjusted)
            redone.append(dataclasses.replace(
                s, p_adjusted=p, significant=bool(p < alpha) if math.isfinite(p) else None))
        out.append(dataclasses.replace(o, swaps=tuple(redone)))
    return out


def _labels(human: Truth, machine: Truth, threshold: float | None) -> Agreement:
    """Both qrels' pairs matched over shared dictionaries (each side's pairs distinct), and
    the agreement on the labels of those both judged."""
    (hu, mu), _ = factorize(human.user, machine.user)
    (hi, mi), items = factorize(human.item, machine.item)
    for truth, u, i in ((human, hu, hi), (machine, mu, mi)):
        dup = duplicates(pair_keys(u, i, max(len(items), 1)))
        if len(dup):  # as score: a repeated judgement is always an error
            report_duplicates(truth, dup, None)
    coverage, h_rows, m_rows = pair_up(hu, hi, mu, mi, len(items))
    h_label, m_label = human.source.label, machine.source.label
    if not len(h_rows):
        raise InputError(m_label, f"shares no judged (query, item) pair with {h_label}: "
                         "nothing to compare (" + "; ".join(
                             f"{t.source.label}: {plural(len(t.relevance), 'pair')} over "
                             f"{plural(len(np.unique(u)), 'query', 'queries')}, e.g. "
                             f"{t.user[0]} / {t.item[0]}"
                             for t, u in ((human, hu), (machine, mu)) if len(u)) + ")")
    sides = [Side(t.source.label, t.source.path, len(t.relevance), len(np.unique(u)),
                  tuple(float(g) for g in np.unique(t.relevance)))
             for t, u in ((human, hu), (machine, mu))]
    result = Agreement(sides[0], sides[1], coverage,
                       labels(human.relevance[h_rows], machine.relevance[m_rows], threshold),
                       threshold)
    if sides[0].grades != sides[1].grades:
        result.notices.append(Notice("agree_grades_differ", 0, {
            "human": h_label, "human_grades": _grades(sides[0].grades), "machine": m_label,
            "machine_grades": _grades(sides[1].grades)}))
    for side, count in (("human", coverage.pairs_human_only),
                        ("machine", coverage.pairs_machine_only)):
        if count:
            result.notices.append(Notice("agree_pairs_one_side", count, {"side": side}))
    return result


def _grades(grades: tuple[float, ...]) -> str:
    shown = ", ".join(f"{g:g}" for g in grades[:8])
    return shown + (f", ... ({plural(len(grades), 'grade')})" if len(grades) > 8 else "")


def _named(runs: Sequence[Any] | Mapping[str, Any] | None, names: Sequence[str] | None
           ) -> tuple[list[str], list[Any]]:
    if runs is None:
        if names:
            raise OptionError("{opt:names} names runs: give them too")
        return [], []
    if isinstance(runs, Mapping):
        if names:
            raise OptionError("give run names as the keys of {opt:runs} or as {opt:names}, "
                              "not both")
        return list(runs), list(runs.values())
    paths = [runs] if isinstance(runs, str) else list(runs)
    return run_names(paths, names), paths


def _path(run: Any, name: str) -> str:
    return str(run) if isinstance(run, str) or hasattr(run, "__fspath__") else f"<{name}>"


def _shared_queries(evaluations) -> tuple[np.ndarray, dict[str, int]]:
    """The queries every run's evaluation under each qrels holds (Arrow's hash joins), and
    how many each qrels evaluates beyond them (for some run)."""
    arrays = [ev.user_id_array for _, evs in evaluations for ev in evs]
    first = arrays[0]
    keep = np.ones(len(first), dtype=bool)
    for ids in arrays[1:]:
        keep &= to_numpy(pc.is_in(first, value_set=ids))
    shared = first.filter(from_numpy(keep))
    if not len(shared):
        raise OptionError("no query is evaluated under both qrels for every run: no system "
                          "ordering to compare (do the runs and both qrels share queries?)")

    def beyond(side: int) -> int:
        ids = pc.unique(pa.chunked_array([evs[side].user_id_array for _, evs in evaluations]))
        return int(len(ids) - len(shared))

    return shared, {"shared": len(shared), "human_beyond": beyond(0),
                    "machine_beyond": beyond(1)}


def _aligned(ev, spec, shared) -> np.ndarray:
    at = to_numpy(pc.index_in(shared, value_set=ev.user_id_array)).astype(np.int64)
    return np.asarray(ev.values(spec), dtype=np.float64)[at]

