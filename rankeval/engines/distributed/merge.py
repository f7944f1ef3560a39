"""The driver's side of a cluster run (Spark's or Ray's): the tasks' chunk results merged into
the input errors, the counts ``validate`` reports, the judgement notice, and the run's
samples when it turned out deterministic."""

from __future__ import annotations

import dataclasses
from typing import Any

from rankeval.engines.distributed.chunks import ChunkResult
from rankeval.engines.partial import Partial, merge
from rankeval.engines.partition import combined, judgement_notice, unevaluable, user_notices
from rankeval.engines.validation import Validation
from rankeval.errors import InputError
from rankeval.io.readers import Source
from rankeval.notices import Notice
from rankeval.settings import Settings


class Side:
    """A stand-in for an input that stays on the cluster: ``finish`` reads only its
    ``.source`` (the judgements are given)."""

    def __init__(self, source: Source):
        self.source = source


def counted(out: Validation, results: list[ChunkResult], labels, settings: Settings) -> Validation:
    """``out`` with the tasks' input errors (and an input without rows) and, when every chunk
    could be read, the users, notices and judgements their partials count (``validate`` on
    a cluster: Spark's tasks or Ray's)."""
    out.errors += merged_errors(results) + empty_inputs(results, labels)
    rows = rows_per_input(results)
    if any(r.partial is None for r in results) or not all(rows[:2]):
        return out
    partial = merge([r.partial for r in results if r.partial is not None])
    c = out.users = partial.counts
    out.notices = [*partial.notices, *user_notices(c, settings, *labels),
                   *judgements(results, labels[1], rows[1], settings)]
    out.rows_beyond_k = partial.rows_beyond_k
    out.inputs["predictions"]["users"] = c.in_predictions
    out.inputs["truth"]["users"] = c.in_truth
    error = unevaluable(c, settings, labels[1], labels[0])
    if error is not None:
        out.errors.append(error)
    return out


def rows_per_input(results: list[ChunkResult]) -> list[int]:
    """Rows of the predictions and of the truth, over every chunk."""
    return [sum(r.rows[i] for r in results) for i in (0, 1)]


def empty_inputs(results: list[ChunkResult], labels) -> list[InputError]:
    """An error for each of the two inputs without a data row."""
    return [InputError(label, "no data rows (only a header)")
            for label, n in zip(labels, rows_per_input(results), strict=True) if not n]


def judgements(results: list[ChunkResult], label: str, rows: int, settings: Settings
               ) -> list[Notice]:
    """The truth's judgement notices, from every chunk's grades (their column's name among
    them, as the local engine names it)."""
    return judgement_notice(label, rows, combined(r.grades for r in results), settings)


def merged(results: list[ChunkResult], labels, formats, settings: Settings
           ) -> tuple[Partial, list[Any], list[Notice]]:
    """Every chunk's partial merged, stand-ins for the two inputs (they stay on the cluster:
    ``finish`` reads only their ``.source``, so they are typed Any) and the judgement notice;
    raises the first input error: the tasks' own, then an input without rows."""
    errors = merged_errors(results) + empty_inputs(results, labels)
    if errors:
        raise errors[0]
    rows = rows_per_input(results)
    partial = merge([r.partial for r in results if r.partial is not None])  # all, by now
    sides: list[Any] = [Side(Source(label, fmt, n))
                        for label, fmt, n in zip(labels, formats, rows, strict=True)]
    return partial, sides, judgements(results, labels[1], rows[1], settings)


def deterministic(results: list[ChunkResult]) -> list[ChunkResult] | None:
    """One sample value in the whole run (a TREC run's Q0): the results without their
    samples, deterministic, as locally; None when the run has several."""
    if len({v for r in results for v in r.samples}) >= 2:
        return None
    return [dataclasses.replace(r, partial=None if r.partial is None else
                                dataclasses.replace(r.partial, samples=None, spread={},
                                                    sample_totals=None))
            for r in results]


def merged_errors(results) -> list[InputError]:
    """Every task's input errors as one list: the same problem in several chunks is one
    error with the counts added and the examples of the smallest user ids (each chunk sends
    its first five, in user order). Problems keep the order in which checks meet them."""
    merged: dict[tuple, dict] = {}
    order: dict[tuple, int] = {}
    for result in results:
        for i, e in enumerate(result.errors):
            key = (e["path"], e["column"], e["problem"], e["hint"], e["unit"])
            order[key] = min(order.get(key, i), i)
            if key not in merged:
                merged[key] = dict(e, examples=list(e["examples"]))
                continue
            m = merged[key]
            m["count"] = None if m["count"] is None or e["count"] is None else (
                m["count"] + e["count"])
            m["examples"] += e["examples"]
    return [InputError(m["path"], m["problem"], column=m["column"], count=m["count"],
                       examples=_examples(m), hint=m["hint"], unit=m["unit"])
            for m in (merged[k] for k in sorted(merged, key=order.__getitem__))]


def _examples(error: dict) -> list[tuple]:
    if error["unit"] != "row of user":
        return error["examples"][:5]
    first = sorted(error["examples"], key=lambda x: x[0])[:5]
    return [(repr(user), value) for user, value in first]
