"""``rankeval convert``: predictions or truth between CSV, TSV, Parquet, TREC, JSON and JSON Lines.

Every row is kept. Tabular outputs keep the input's row order and columns; a TREC run and the
dict-of-dicts JSON need a score per row, so they are written in ranking order with
``score = 1 / rank`` when the input has ranks (or only a file order) and no scores.
"""

from __future__ import annotations

import gzip
import io
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankeval.build.checks import report_duplicates, report_repeated_ranks
from rankeval.build.ordering import order_rows, scores_against_ranks
from rankeval.build.samples import JOIN
from rankeval.conventions import TIE_ORDERS
from rankeval.errors import InputError, OptionError
from rankeval.io.arrow import from_numpy
from rankeval.io.columns import COLUMNS
from rankeval.io.encode import duplicates, factorize, pair_keys
from rankeval.io.formats import FORMATS, STDIN, STDOUT, detect_format, named_format
from rankeval.io.load import Predictions, load_predictions, load_truth
from rankeval.io.output import check_distinct, check_writable, write_bytes
from rankeval.io.readers import Table, open_table
from rankeval.kernels.chunk import segment_positions
from rankeval.kernels.distinct import first_index
from rankeval.notices import Notice
from rankeval.params import PER_METRIC_TIES
from rankeval.settings import ROWS

KINDS = ("predictions", "truth")
_KIND_BY_SUFFIX = {".qrels": "truth", ".run": "predictions"}


@dataclass(frozen=True)
class Converted:
    kind: str
    rows: int
    source_format: str
    target_format: str
    notices: list[Notice] = field(default_factory=list)


def _truth_columns(truth) -> dict[str, Any]:
    """The truth's columns as read; with subtopics, one row per subtopic judgement."""
    aspects = truth.aspects
    if aspects is not None:  # its rows are the file's, in its order
        rows = from_numpy(aspects.row)
        return {"user_id": truth.user.take(rows), "item_id": truth.item.take(rows),
                "subtopic": aspects.names.take(from_numpy(aspects.subtopic)),
                "relevance": aspects.relevance}
    (user, item), items = factorize(truth.user, truth.item)
    dup = duplicates(pair_keys(user, item, max(len(items), 1)))
    if len(dup):  # as score: a repeated judgement is always an error
        report_duplicates(truth, dup, None)
    return {"user_id": truth.user, "item_id": truth.item, "relevance": truth.relevance}


def convert(
    source: str,
    target: str,
    *,
    kind: str | None = None,
    input_format: str | None = None,
    output_format: str | None = None,
    tag: str = "rankeval",
    ties: str = "trec",
    dedupe: bool = False,
    user_col: str | None = None,
    item_col: str | None = None,
    rank_col: str | None = None,
    score_col: str | None = None,
    relevance_col: str | None = None,
    subtopic_col: str | None = None,
    sample_col: str | None = None,
    reading: Mapping[str, Any] | None = None,
) -> Converted:
    """Read ``source`` as predictions or truth and write it to ``target`` ("-": stdout)."""
    if kind is not None and kind not in KINDS:
        raise OptionError(f"{{option}} must be one of {', '.join(KINDS)}, got {kind!r}", "kind")
    ties = ROWS["ties"].check(ties)
    if ties not in TIE_ORDERS:
        how = "orders each metric's lists its own way" if ties in PER_METRIC_TIES else \
            "scores ties fairly"
        raise OptionError(f"{{option}} {ties} {how} when evaluating; a converted "
                          f"file holds one order: use {', '.join(TIE_ORDERS)}", "ties")
    check_writable(target, "OUT")
    check_distinct({"OUT": target}, [source])
    named = named_format(source, input_format, "{opt:input_format}")
    sniffed = None if named is not None else _sniffed(source, kind, reading or {})
    reads = FORMATS[sniffed[0].format if sniffed is not None else str(named)]
    if target == STDOUT and not output_format:
        raise OptionError("{option} is required when writing to '-' (standard output)",
                          "output_format")
    writes = FORMATS[detect_format(target, output_format, "{opt:output_format}",
                                   reading=False)]
    kind = (kind or _kind_from_alias(input_format, reads) or _kind_from_name(source)
            or _kind_from_name(target) or (sniffed[1] if sniffed else None))
    if kind is None and reads.layouts and not (reads.tells_kind and source != STDIN):
        raise OptionError(f"{source}: cannot tell a run from qrels here: say which with {{option}}",
                          "kind")
    in_fmt, out_fmt = reads.name, writes.name
    if sniffed is not None:
        table = sniffed[0]
        kind = kind or _kind_from_columns(table, relevance_col)
    elif kind is None and reads.tells_kind:
        table, kind = _open_either(source, in_fmt, reading or {})
    else:
        table = open_table(source, in_fmt, "{opt:input_format}", role=kind or "predictions",
                           **(reading or {}))
        kind = kind or _kind_from_columns(table, relevance_col)

    if writes.tagged:
        writes.codec().check_tag(tag)
    notices: list[Notice] = []
    cols = {"user_col": user_col, "item_col": item_col, "rank_col": rank_col,
            "score_col": score_col, "sample_col": sample_col, "relevance_col": relevance_col,
            "subtopic_col": subtopic_col}  # each kind reads its own
    if kind == "predictions":
        preds = load_predictions(table, cols)
        out = _predictions_table(preds, writes.ranked, ties, dedupe, notices)
    else:
        truth = load_truth(table, cols, None)
        columns = _truth_columns(truth)
        # pyarrow-stubs: table() maps names to Arrays or lists; pyarrow takes chunked and
        # numpy arrays too
        out = pa.table(columns)
    data = writes.codec().encode(_ids_as_text(out), out_fmt, kind, tag, table.label)
    if not writes.binary and target != STDOUT and target.lower().endswith(".gz"):
        data = gzip.compress(data)
    write_bytes(target, data)
    # TREC is a run or qrels, as the user knows it
    return Converted(kind, out.num_rows, reads.shown(kind), writes.shown(kind), notices)


def _sample_column(preds: Predictions, rows: np.ndarray) -> dict[str, pa.ChunkedArray]:
    if preds.sample is None:
        return {}
    return {"sample": preds.sample.take(from_numpy(rows))}


def _ids_as_text(table: pa.Table) -> pa.Table:
    """Ids read as integers (a Parquet or DataFrame column) written as the text they are
    compared as, so that every output format gives ids of one type whatever the input's."""
    for k, name in enumerate(table.column_names):
        if name in ("user_id", "item_id", "subtopic", "sample") and pa.types.is_integer(
                table.schema.field(name).type):
            table = table.set_column(k, name, table.column(name).cast(pa.string()))
    return table


def _kind_from_alias(given: str | None, fmt) -> str | None:
    """The kind a format's name for one role says (``qrels``: the truth, ``run``)."""
    wanted = (given or "").lower()
    return next((role for role, name in fmt.names.items() if name == wanted), None)


def _kind_from_name(path: str) -> str | None:
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    return _KIND_BY_SUFFIX.get(suffixes[-1]) if suffixes else None


def _sniffed(source: str, kind: str | None, reading: Mapping[str, Any]
             ) -> tuple[Table, str | None]:
    """IN told from its content (standard input, a name without a known extension), opened
    as ``kind``, else as a run, else as qrels (a TREC file's fields say which); the kind
    found, or None when the layout does not tell (a delimited file: its columns do)."""
    data = sys.stdin.buffer.read() if source == STDIN else None

    def attempt(role: str) -> Table:
        stream = io.BytesIO(data) if data is not None else None
        return open_table(source, None, "{opt:input_format}", stdin=stream, role=role,
                          **reading)

    if kind is not None:
        return attempt(kind), kind
    try:
        table = attempt("predictions")
    except InputError:  # qrels read as a run: a truth's layout
        return attempt("truth"), "truth"
    if table.kind.layouts and not (table.sniffed and table.sniffed.role):
        raise OptionError(f"{table.label}: cannot tell a run from qrels here: say which "
                          "with {option}", "kind")
    return table, table.sniffed.role if table.sniffed else None


def _open_either(source: str, fmt: str, reading: Mapping[str, Any]) -> tuple[Table, str]:
    """A file of unknown kind whose layout tells (TREC: a run if it has a run's 6 fields,
    else qrels, 4 fields)."""
    try:
        return open_table(source, fmt, "", role="predictions", **reading), "predictions"
    except InputError as as_run:
        try:
            return open_table(source, fmt, "", role="truth", **reading), "truth"
        except InputError:
            raise as_run from None


def _kind_from_columns(table: Table, relevance_col: str | None) -> str:
    names = {c.lower() for c in table.columns}
    default, aliases = COLUMNS["relevance"]
    wanted = {relevance_col.lower()} if relevance_col else {default, *map(str.lower, aliases)}
    return "truth" if names & wanted else "predictions"


def _predictions_table(
    preds: Predictions, ranked: bool, ties: str, dedupe: bool, notices: list[Notice]
) -> pa.Table:
    """The rows to write: repeated (user, item) pairs refused, or with ``dedupe`` the
    best-ranked kept, as ``score`` does; for a ``ranked`` format (TREC, JSON) in ranking
    order with a score that keeps it, else in the file's row order. A stochastic run's
    rankings are ordered and checked each on its own, its sample column written too."""
    lists = preds.user
    if preds.sample is not None:  # one list per (user, sample): users first, as ids sort
        # pyarrow-stubs take all scalars or all arrays; pyarrow joins arrays by a scalar
        lists = pc.binary_join_element_wise(  # type: ignore[call-overload]
            preds.user.cast(pa.string()), preds.sample.cast(pa.string()), JOIN)
    (user, item), items = factorize(lists, preds.item)
    order = order_rows(user, item, preds.rank, preds.score, ties)
    if order is None:  # already in ranking order
        order = np.arange(len(user))
    if ranked and preds.rank is not None:  # a ranked format writes one order: none is told
        report_repeated_ranks(preds, order, user[order], "ranks must be 1, 2, 3, ... per user "
                              "to be written in order: fix the writer, or drop the rank "
                              "column to order by score")
    if ranked and preds.rank is None and preds.score is not None and ties != "input":
        kept = order_rows(user, item, None, preds.score, "input")  # tied rows as in the file
        moved = np.unique(user[order[order != (np.arange(len(order)) if kept is None else kept)]])
        if len(moved):
            notices.append(Notice("ties_reordered", len(moved), {"ties": ties}))
    keys = pair_keys(user[order], item[order], max(len(items), 1))
    first = first_index(keys)
    if len(first) < len(keys):
        if not dedupe:
            dup = duplicates(pair_keys(user, item, max(len(items), 1)))
            report_duplicates(preds, dup, "{opt:dedupe} keeps the best-ranked one")
        notices.append(Notice("duplicates_dropped", len(keys) - len(first),
                              {"path": preds.source.label}))
        order = order[np.sort(first)]
    if not ranked:
        rows = np.sort(order)  # the file's order, without the dropped repeats
        columns: dict[str, pa.Array | pa.ChunkedArray] = {
            "user_id": preds.user.take(from_numpy(rows)),
            **_sample_column(preds, rows),
            "item_id": preds.item.take(from_numpy(rows)),
        }
        if preds.rank is not None:
            columns["rank"] = from_numpy(preds.rank[rows].astype(np.int64))
        if preds.score is not None:
            columns["score"] = from_numpy(preds.score[rows])
        # pyarrow-stubs: table() maps names to Arrays or lists; pyarrow takes chunked arrays
        return pa.table(columns)  # type: ignore[arg-type]
    rank = segment_positions(user[order])
    score = preds.score[order] if preds.score is not None else 1.0 / rank
    if preds.rank is not None and preds.score is not None:
        n = scores_against_ranks(user[order], score, ties_count=True)
        if n:
            notices.append(Notice("scores_disagree_with_ranks", n, {"written": True}))

    take = from_numpy(order)
    columns = {
        "user_id": preds.user.take(take),
        **_sample_column(preds, order),
        "item_id": preds.item.take(take),
        "rank": from_numpy(rank),
        "score": from_numpy(score),
    }
    # pyarrow-stubs: table() maps names to Arrays or lists; pyarrow takes chunked arrays
    return pa.table(columns)  # type: ignore[arg-type]
