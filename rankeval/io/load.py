"""Raw tables to typed inputs: columns resolved by name or alias, every value checked.

Checks that need only one row at a time live here; checks across rows (duplicate pairs, repeated
ranks) need the ids factorized and live in ``build/stages.py``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.errors import InputError, report
from rankeval.io.arrow import from_numpy, to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import (
    as_number,
    finite_column,
    id_column,
    read_typed,
    report_rows,
    whole_column,
)
from rankeval.io.columns import resolve_role
from rankeval.io.formats.jsonl import number_text
from rankeval.io.formats.parquet import column_type
from rankeval.io.frames import MemoryTable
from rankeval.io.readers import Source, Table, for_role, open_table
from rankeval.io.roles import swapped
from rankeval.io.subtopics import Aspects, by_pair


@dataclass(frozen=True)
class Predictions:
    """A run: one row per (user, item), with the order given by rank, score or the file."""

    user: pa.ChunkedArray
    item: pa.ChunkedArray
    rank: np.ndarray | None
    score: np.ndarray | None
    source: Source
    columns: dict[str, str]  # role -> column name in the file
    # A stochastic run: each row's sampled ranking (``build/samples.py``); None when the
    # run has no sample column or one sample per user
    sample: pa.ChunkedArray | None = None
    # The scores as written (text, decimals), read again on demand: ``_score_text``
    score_text: Callable[[], pa.ChunkedArray] | None = field(default=None, repr=False,
                                                            compare=False)

    @property
    def order(self) -> str:
        return "rank" if self.rank is not None else "score" if self.score is not None else "input"


@dataclass(frozen=True)
class Truth:
    """Ground truth: one row per judged (user, item) with its relevance (1 when not given);
    with subtopics, the highest relevance of the pair's subtopic rows (ndeval's "relevant to
    any subtopic"), the rows themselves in ``aspects``."""

    user: pa.ChunkedArray
    item: pa.ChunkedArray
    relevance: np.ndarray
    source: Source
    columns: dict[str, str]
    aspects: Aspects | None = None  # io/subtopics.py


def release_ids(*inputs: Predictions | Truth) -> None:
    """Let go of the id columns of inputs that nothing will read again: once the engine has
    encoded them, its codes and dictionaries name every id, and the id text is the largest
    thing an evaluation holds on real catalogs (a fifth of the peak on 10M numeric ids).
    Afterwards ``.user`` and ``.item`` are None."""
    for data in inputs:
        object.__setattr__(data, "user", None)  # frozen for every other purpose
        object.__setattr__(data, "item", None)


@dataclass(frozen=True)
class Train:
    """Training interactions: one row per (user, item) event, with an optional count."""

    user: pa.ChunkedArray
    item: pa.ChunkedArray
    count: np.ndarray | None  # None: every row is one interaction
    source: Source
    columns: dict[str, str]


@dataclass(frozen=True)
class Catalog:
    """The item universe: one item per row."""

    item: pa.ChunkedArray
    source: Source
    columns: dict[str, str]


def _exact_scores(table: Table | MemoryTable, name: str, values: np.ndarray) -> np.ndarray:
    """Integer scores past 2^53 as written in a text file would round to the same float and
    tie without a word; they are refused, naming the rows (Parquet refuses them on reading)."""
    if table.format in ("parquet", "json") or not len(values) or (
            values.max() < 2.0**53 and values.min() > -(2.0**53)):
        return values  # two reductions, no full-size temporary: the common case
    big = np.flatnonzero(np.abs(values) >= 2.0**53)
    # the text of finite scores: no nulls
    text: list[Any] = table.read({name: pa.string()}).column(name).take(from_numpy(big)).to_pylist()
    lost = [(int(i) + 1, t) for i, t in zip(big, text, strict=True)
            if re.fullmatch(r"\s*[+-]?[0-9]+\s*", t) and int(t) != int(float(t))]
    if lost:
        report(InputError(
            table.label, "integer scores too large to order exactly (64-bit floats hold "
            "integers up to 2^53 = 9,007,199,254,740,992)", column=name, count=len(lost),
            examples=lost[:5], unit=getattr(table, "unit", "row"),
            hint="rescale them, or give the order as ranks"))
    return values


Named = Mapping[str, str | None]  # user_col, item_col, ... -> the file's column (None: found)


def load_predictions(table: Table | MemoryTable, columns: Named | None = None,
                     one_sample: bool = False) -> Predictions:
    """Resolve and check a run's columns (``columns``: ``user_col``, ``item_col``,
    ``rank_col``, ``score_col``, ``sample_col`` named; the others are found by their
    aliases). A sample column that holds one value (a TREC run's constant ``Q0``) is not
    read as samples: the run is deterministic, unless ``one_sample`` (a part of a run, which
    cannot tell: the Spark engine's chunks)."""
    label = table.label
    found = resolve_role(table.columns, "predictions", columns or {}, label)
    user, item, rank, score, sample = (found[c] for c in ("user", "item", "rank", "score",
                                                          "sample"))
    assert user is not None and item is not None  # required: resolve_role raises without them
    if rank is None and score is None:
        _no_order_column(table, [c for c in table.columns if c not in (user, item, sample)])
    types: dict[str, pa.DataType] = {user: ID, item: ID}
    if sample is not None:
        types[sample] = ID
    if rank is not None:
        types[rank] = pa.int64()  # the fast path; a file of "1.0" or "2.5" comes back as floats
    if score is not None:
        types[score] = pa.float64()
    data = read_typed(table, types)
    ranks = _ranks(data, rank, label) if rank is not None else None
    samples = id_column(data, sample, label) if sample is not None else None
    if samples is not None and not one_sample and len(pc.unique(samples)) < 2:  # any type
        samples = None
    return Predictions(
        user=id_column(data, user, label),
        item=id_column(data, item, label),
        rank=ranks,
        score=_exact_scores(table, score, finite_column(data, score, label)) if score else None,
        source=table.described(data.num_rows),
        columns=_roles(user=user, item=item, rank=rank, score=score,
                       sample=sample if samples is not None else None),
        sample=samples,
        score_text=_score_text(table, score, data.num_rows) if score else None,
    )


# Formats whose scores are written as text, which may hold more digits than a 64-bit float
TEXT_SCORES = ("csv", "tsv", "trec", "jsonl")


def _score_text(table: Table | MemoryTable, name: str, rows: int
                ) -> Callable[[], pa.ChunkedArray] | None:
    """The scores as written, when they may tell apart what 64-bit floats tie (text with
    more digits than a float holds, Parquet decimals): read again only if the build finds
    tied scores (``build.checks.spurious_ties``); None when the floats are the scores."""
    if isinstance(table, Table) and table.format == "jsonl":  # Arrow reads numbers as doubles
        return lambda: (number_text(table.raw(), name, rows)
                        or table.read({name: pa.string()}).column(name))
    if isinstance(table, Table) and (table.format in TEXT_SCORES or (
            table.format == "parquet" and pa.types.is_decimal(column_type(table, name)))):
        return lambda: table.read({name: pa.string()}).column(name)
    return None


def _no_order_column(table: Table | MemoryTable, others: list[str]) -> None:
    """Without a rank or score column the file order ranks each list; a numeric column that
    was not recognised is far more likely the intended order, so it stops the run."""
    numeric = []
    for name in others:
        try:
            col = table.read({name: pa.string()}).column(name)
            if col.null_count == 0 and len(col):
                pc.cast(col, pa.float64())
                numeric.append(name)
        except (InputError, pa.ArrowException):
            continue
    if numeric:
        raise InputError(
            table.label,
            f"no rank or score column, and numeric columns that could be one: {numeric}; "
            "name the order with {opt:score_col} (higher is better) or {opt:rank_col} "
            "(1 is best), or drop those columns to rank by the file's row order",
        )


def _ranks(data: pa.Table, name: str, label: str) -> np.ndarray:
    """Whole numbers >= 1, as int32 when they all fit (half the memory of every copy), else
    int64. Each problem is one error naming its rows (``checked.whole_column``, then ranks
    below 1)."""
    small = _small_ranks(data.column(name))
    if small is not None:
        return small
    ranks = whole_column(data, name, label, "ranks")
    bad = ranks < 1
    if bad.any():
        report_rows(label, "ranks below 1 (ranks start at 1 = best)", name, np.flatnonzero(bad),
                    lambda i: int(ranks[i]))
        ranks = np.where(bad, 1, ranks)
    fits = not len(ranks) or ranks.max() < 2**31
    return ranks.astype(np.int32 if fits else np.int64, copy=False)


def _small_ranks(col: pa.ChunkedArray) -> np.ndarray | None:
    """Ranks that are all whole numbers in 1..2^31-1 (integers, or floats as text files are
    read) as int32, cast by Arrow into its own pool: one pass that refuses fractions, NaN
    and values out of range, no full-size int64 or float copy, and the pool's pages are warm
    from the read where a new block of numpy's heap is touched page by page. None when any
    rank is not such a number (then each problem is named by its rows)."""
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) or col.null_count:
        return None
    if not len(col):
        return np.zeros(0, dtype=np.int32)
    if pa.types.is_integer(col.type):
        low, high = (v.as_py() for v in pc.min_max(col).values())
        if low < 1 or high >= 2**31:
            return None
        return to_numpy(pc.cast(col, pa.int32(), safe=False))
    try:
        ranks = pc.cast(col, pa.int32(), safe=True)  # whole and in range, or ArrowInvalid
    except pa.ArrowInvalid:
        return None
    if pc.min(ranks).as_py() < 1:
        return None
    return to_numpy(ranks)


def load_truth(table: Table | MemoryTable, columns: Named | None = None,
               subtopics: bool | None = False) -> Truth:
    """Resolve and check the ground truth's columns (``columns``: ``user_col``, ``item_col``,
    ``relevance_col``, ``subtopic_col`` named); without a relevance column every row is 1.
    ``subtopics``: the intent-aware metrics are asked for, so the rows are (user, item,
    subtopic) judgements, kept in ``Truth.aspects``; None: read them when the file has a
    subtopic column that says something (not a qrels file's iteration field of 0s)."""
    label, columns = table.label, columns or {}
    found = resolve_role(table.columns, "truth", columns, label)
    user, item, relevance = (found[c] for c in ("user", "item", "relevance"))
    assert user is not None and item is not None  # required: resolve_role raises without them
    subtopic = found["subtopic"] if subtopics is not False else None
    if subtopics and subtopic is None:
        raise InputError(label, "the intent-aware metrics need subtopic judgements: a "
                         "subtopic column (looked for subtopic, intent, aspect; name it with "
                         "{opt:subtopic_col}), or qrels whose second field is the subtopic")
    types: dict[str, pa.DataType] = {user: ID, item: ID}
    if relevance is not None:
        types[relevance] = pa.float64()
    if subtopic is not None:
        types[subtopic] = ID
    try:
        data = read_typed(table, types)
    except InputError:
        _prefs_layout(table)
        raise
    source = table.described(data.num_rows)
    rel = (
        finite_column(data, relevance, label)
        if relevance is not None
        else np.ones(data.num_rows, dtype=np.float64)
    )
    truth = Truth(
        user=id_column(data, user, label),
        item=id_column(data, item, label),
        relevance=rel,
        source=source,
        columns=_roles(user=user, item=item, relevance=relevance, subtopic=subtopic),
    )
    if subtopic is None:
        return truth
    named = id_column(data, subtopic, label)
    if subtopics is None and columns.get("subtopic_col") is None and pc.all(pc.equal(  # type: ignore[call-overload]
            named.cast(pa.string()), "0")).as_py():
        return truth
    return by_pair(truth, named)


def _prefs_layout(table: Table | MemoryTable) -> None:
    """Raise, for a TREC truth whose every line had a fifth field (and whose grades failed to
    read), that it is trec_eval's prefs file: said so, as the grades' error would not."""
    if isinstance(table, Table) and table.format == "trec" and table.longer_lines():
        raise InputError(table.label, "every line has more than the 4 fields of qrels ('qid "
                         "iter docno rel'), as trec_eval's prefs file ('qid group subgroup "
                         "docno level'), which {opt:preferences} reads")


def load_train(table: Table | MemoryTable, columns: Named | None = None,
               role: str = "train") -> Train:
    """Training interactions (``columns``: ``user_col``, ``item_col``, ``count_col`` named);
    a count column (counts >= 0) weighs each row. ``role``: ``exclude`` for the pairs of
    --exclude (a user and an item column, nothing else read)."""
    label = table.label
    found = resolve_role(table.columns, role, columns or {}, label)
    user, item, count = (found.get(c) for c in ("user", "item", "count"))
    assert user is not None and item is not None  # required: resolve_role raises without them
    types: dict[str, pa.DataType] = ({user: ID, item: ID}
                                     | ({count: pa.float64()} if count is not None else {}))
    data = read_typed(table, types)
    counts = None
    if count is not None:
        counts = finite_column(data, count, label)
        bad = counts < 0
        if bad.any():
            report_rows(label, "counts below 0", count, np.flatnonzero(bad),
                        lambda i, c=counts: as_number(c[i]))
    return Train(user=id_column(data, user, label), item=id_column(data, item, label),
                 count=counts, source=table.described(data.num_rows),
                 columns=_roles(user=user, item=item, count=count))


def load_catalog(table: Table | MemoryTable, item_col: str | None = None) -> Catalog:
    """The item universe (repeated items count once)."""
    label = table.label
    item = resolve_role(table.columns, "catalog", {"item_col": item_col}, label)["item"]
    assert item is not None  # required: resolve_role raises without it
    data = read_typed(table, {item: ID})
    return Catalog(item=id_column(data, item, label),
                   source=table.described(data.num_rows),
                   columns=_roles(item=item))


def _roles(**names: str | None) -> dict[str, str]:
    return {role: name for role, name in names.items() if name is not None}


def open_input(data: Any, role: str, fmt: str | None = None,
               reading: Mapping[str, Any] | None = None) -> Table | MemoryTable:
    """A path (``-``: standard input) or an in-memory table (pandas, polars, Arrow table,
    record batch or batch reader) as a table to load; ``reading``: delimiter, encoding."""
    if isinstance(data, str | os.PathLike):
        flag = f"{{opt:{'preds' if role == 'predictions' else role}_format}}"
        return open_table(data, fmt, flag, role=role, **for_role(reading, role))
    return MemoryTable(data, role)


def load_inputs(
    predictions: Any,
    truth: Any,
    columns: Mapping[str, str | None] | None = None,
    preds_format: str | None = None,
    truth_format: str | None = None,
    reading: Mapping[str, Any] | None = None,
    subtopics: bool = False,
) -> tuple[Predictions, Truth]:
    """Open and load both inputs; ``columns`` maps ``user_col``... to column names;
    ``subtopics``: the truth's subtopic judgements are read (``load_truth``)."""
    cols = columns or {}
    preds, truth_table = open_both(predictions, truth, cols, preds_format, truth_format, reading)
    judged = load_truth(truth_table, cols, subtopics)
    return preds, judged


def open_both(predictions: Any, truth: Any, cols: Mapping[str, str | None],
              preds_format: str | None, truth_format: str | None,
              reading: Mapping[str, Any] | None) -> tuple[Predictions, Table | MemoryTable]:
    """Both inputs opened (a run given as the truth and the truth as the run refused), the
    run loaded; the truth's table, for its caller to load as it reads it."""
    run_table = open_input(predictions, "predictions", preds_format, reading)
    truth_table = open_input(truth, "truth", truth_format, reading)
    swapped(run_table, truth_table)
    preds = load_predictions(run_table, cols)
    return preds, truth_table
