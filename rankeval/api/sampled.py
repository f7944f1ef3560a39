"""``sampled(runs, candidates, negatives, ...)`` -> a ``SampledResult`` (``rankeval
sampled``): metrics on sampled negatives and their corrections toward the full ranking. The
runs and the truth are read here; ``analysis/sampled_runs.py`` turns them into sampled ranks,
``analysis/sampled.py`` estimates."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.analysis.choices import MAX_CANDIDATES
from rankeval.analysis.sampled import Ranks, SampledResult, check_sizes, estimate
from rankeval.analysis.sampled_runs import TIES, among_negatives, parse_metrics
from rankeval.build.ordering import ordered_by
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import fill_null, from_numpy, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import (
    id_column,
    read_typed,
    whole_column,
)
from rankeval.io.columns import resolve_column
from rankeval.io.encode import duplicates
from rankeval.io.load import load_predictions, load_truth, open_input


def sampled(runs: Any, candidates: int | None = None, negatives: int | None = None, *,
            truth: Any = None, candidates_col: str | None = None, candidates_file: Any = None,
            candidates_format: str | None = None,
            metrics: str | Iterable[str] = "hit_rate,ndcg,mrr,auc",
            k: int | str | Iterable[int] = 10, gamma: float = 0.1, sampling: str = "without",
            ties: str = "expected", names: Sequence[str] | None = None,
            preds_format: str | None = None, truth_format: str | None = None,
            columns: Mapping[str, str | None] | None = None,
            reading: Mapping[str, Any] | None = None,
            config: str | None = None) -> SampledResult:
    """Sampled metrics and their corrections toward the full ranking among ``candidates``
    items (Krichene and Rendle 2020).

    ``runs``: one run or a list (or a dict name -> run) of paths or tables. Without
    ``truth`` each has one row per held-out item with its rank among itself and its
    ``negatives`` sampled negatives (a ``rank`` or ``rank_among_sampled`` column). With
    ``truth`` each holds the scores (or ranks) of every user's held-out items and sampled
    negatives, and ``truth`` names the held-out items (relevance > 0); ``negatives`` is
    then read from the file (given, it must agree). ``metrics``: hit_rate, precision, ndcg,
    mrr, auc; ``k``: their cut-offs; ``gamma``: the bias-variance correction's weight of
    variance; ``sampling``: negatives drawn ``"without"`` or ``"with"`` replacement;
    ``ties``: expected, optimistic or pessimistic; ``columns``: ``user_col``, ``item_col``,
    ``rank_col``, ``score_col``, ``relevance_col``; ``reading``: delimiter, encoding.
    Each held-out item's own number of candidates, in place of ``candidates``: the column
    ``candidates_col`` of each run (a whole number on each held-out item's row), or
    ``candidates_file`` (a user column and ``candidates_col``, default ``candidates``: one
    number per user). ``config``: the configuration file the options came from, named in
    every report.

    >>> rankeval.sampled("scores.csv", candidates=3706, truth="heldout.csv")
    """
    per_user = _check_candidates(candidates, candidates_col, candidates_file)
    check_sizes(candidates or MAX_CANDIDATES, negatives)
    if sampling not in ("without", "with"):
        raise OptionError(f"sampling must be 'without' or 'with', got {sampling!r}")
    if ties not in TIES:
        raise OptionError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
    named = _named(runs, names)
    cols = dict(columns or {})
    wanted = parse_metrics(metrics, k)
    judged = None
    if truth is not None:
        judged = load_truth(open_input(truth, "truth", truth_format, reading),
                            {**cols, "subtopic_col": None})
    ranks: dict[str, Ranks] = {}
    sizes: dict[str, np.ndarray] = {}
    counts = None if candidates_file is None else _candidate_file(
        open_input(candidates_file, "candidates", candidates_format, reading),
        cols.get("user_col"), candidates_col)
    warnings: list[str] = []
    orders: dict[str, str] = {}
    for name, data in named.items():
        table = open_input(data, "predictions", preds_format, reading)
        preds = load_predictions(table, {**cols, "sample_col": None})
        if judged is None:
            if preds.rank is None:
                raise InputError(preds.source.label, "no rank column: each row is a held-out "
                                 "item with its rank among the sampled negatives (or, with "
                                 "the scores of the negatives too, give the held-out items "
                                 "last: rankeval sampled RUN [RUN...] TRUTH)")
            ranks[name] = preds.rank
            if per_user is not None:
                sizes[name] = _sizes(table, preds, np.arange(len(preds.rank)), candidates_col,
                                     counts)
            continue
        low, high, found, left, rows = among_negatives(preds, judged, ties)
        orders[name] = ordered_by(preds, "rank")  # a rank column ranks, as among_negatives
        if per_user is not None:
            sizes[name] = _sizes(table, preds, rows, candidates_col, counts)
        if negatives is not None and found != negatives:
            raise InputError(preds.source.label, f"{found:,} sampled negatives per held-out "
                             f"item here, but {negatives:,} given")
        negatives = found
        ranks[name] = (low, high)
        if left:
            verb = "is not an instance" if left == 1 else "are not instances"
            warnings.append(f"{name}: {plural(left, 'user')} with scores but no held-out item "
                            f"in the truth {verb}")
    if negatives is None:
        raise OptionError("{opt:negatives} is needed: how many negatives were sampled per "
                          "held-out item (with the truth it is read from the runs)")
    every = np.concatenate([*sizes.values(), np.zeros(0, dtype=np.int64)])
    if per_user is not None and len(every):
        candidates = int(every.max())
        per_user |= {"min": int(every.min()), "max": candidates}
    result = estimate(ranks, wanted, candidates or MAX_CANDIDATES, negatives, gamma,
                      sampling == "with", sizes or None)
    return SampledResult(result.runs, result.candidates, result.negatives, result.gamma,
                         result.replacement, result.flips,
                         ties if judged is not None else None, warnings,
                         per_user if per_user is not None and len(every) else None, config,
                         orders)


def _check_candidates(candidates: int | None, column: str | None,
                      file: Any) -> dict[str, Any] | None:
    """One source of the number of candidates: ``candidates`` for every held-out item, or
    each one's own (a column of the runs, or a file); what the report says of the latter."""
    if candidates is not None and (column is not None or file is not None):
        raise OptionError("give {opt:candidates} N for every held-out item, or each one's "
                          "own with {opt:candidates_col} or {opt:candidates_file}, not both")
    if candidates is None and column is None and file is None:
        raise OptionError("{opt:candidates} N is needed (how many items each held-out item "
                          "would be ranked among in full), or each one's own: "
                          "{opt:candidates_col} NAME (a column of the runs) or "
                          "{opt:candidates_file} FILE (user, candidates)")
    if candidates is not None:
        return None
    if file is not None:
        label = os.fspath(file) if isinstance(file, str | os.PathLike) else "a table"
        return {"from": f"{label}, column {column or CANDIDATES}"}
    return {"from": f"column {column}"}


CANDIDATES = "candidates"  # the column of a candidates file, unless named


def _number_column(table, name: str, label: str) -> np.ndarray:
    """A column of whole numbers (each held-out item's candidates)."""
    return whole_column(read_typed(table, {name: pa.float64()}), name, label,
                        "numbers of candidates")


def _candidate_file(table, user_col: str | None, column: str | None) -> tuple[pa.Array,
                                                                             np.ndarray]:
    """(users, their numbers of candidates) of a candidates file, each user once."""
    user = resolve_column(table.columns, "user", user_col, table.label, True)
    name = column or CANDIDATES
    found = [c for c in table.columns if c.lower() == name.lower()]
    if not found:
        raise InputError(table.label, f"no column {name!r} of numbers of candidates; "
                         f"columns found: {', '.join(map(repr, table.columns))}; name it "
                         "with {opt:candidates_col}")
    assert user is not None  # required
    users = id_column(read_typed(table, {user: ID}), user, table.label)
    values = _number_column(table, found[0], table.label)
    repeat = duplicates(to_numpy(pc.index_in(users, value_set=pc.unique(users))))
    if len(repeat):
        raise InputError(table.label, "users given more than once", count=len(repeat),
                         examples=[(int(r) + 1, users[int(r)].as_py()) for r in repeat[:5]])
    return users.combine_chunks() if isinstance(users, pa.ChunkedArray) else users, values


def _sizes(table, preds, rows: np.ndarray, column: str | None,
           counts: tuple[pa.Array, np.ndarray] | None) -> np.ndarray:
    """Each held-out item's number of candidates (``rows``: the run's rows of the items):
    from the run's column, or its user's in the candidates file."""
    label = preds.source.label
    if counts is None:
        assert column is not None  # _check_candidates: a column or a file
        if not any(c == column for c in table.columns):
            raise InputError(label, f"no column {column!r} (from {{opt:candidates_col}}); "
                             f"columns found: {', '.join(map(repr, table.columns))}")
        return _number_column(table, column, label)[rows]
    users, values = counts
    where = to_numpy(fill_null(pc.index_in(preds.user.take(from_numpy(rows)),
                                           value_set=users), -1)).astype(np.int64)
    missing = np.flatnonzero(where < 0)
    if len(missing):
        raise InputError(label, "held-out items whose user has no number of candidates in "
                         "{opt:candidates_file}", count=len(missing),
                         examples=[(int(rows[i]) + 1, preds.user[int(rows[i])].as_py())
                                   for i in missing[:5]])
    return values[where]


def _named(runs: Any, names: Sequence[str] | None) -> dict[str, Any]:
    """Runs by name: a dict as given, else the names given or the paths (run-1, ...)."""
    if isinstance(runs, Mapping):
        return dict(runs)
    items = list(runs) if isinstance(runs, list | tuple) else [runs]
    given = list(names) if names else [os.fspath(r) if isinstance(r, str | os.PathLike)
                                       else f"run-{i + 1}" for i, r in enumerate(items)]
    if len(given) != len(items):
        raise OptionError(f"{len(given)} names for {plural(len(items), 'run')}")
    return dict(zip(given, items, strict=True))
