"""``rankeval convert``: predictions or truth between CSV, TSV, Parquet, TREC, JSON and JSON Lines.

Every row is kept. Tabular outputs keep the input's row order and columns; a TREC run and the
dict-of-dicts JSON need a score per row, so they are written in ranking order with
``score = 1 / rank`` when the input has ranks (or only a file order) and no scores.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rankeval.build.checks import report_duplicates
from rankeval.build.encode import duplicates, factorize, pair_keys
from rankeval.build.ordering import order_rows, scores_against_ranks
from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import from_numpy
from rankeval.io.columns import COLUMNS
from rankeval.io.formats import STDIN, STDOUT, detect_format
from rankeval.io.jsonfmt import write_json, write_jsonl
from rankeval.io.load import Predictions, load_predictions, load_truth
from rankeval.io.output import check_distinct, check_writable, csv_bytes, write_atomic, write_bytes
from rankeval.io.readers import Table, open_table
from rankeval.io.trec import write_qrels, write_run
from rankeval.kernels.chunk import segment_positions
from rankeval.kernels.distinct import first_index
from rankeval.notices import Notice
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
    reading: dict[str, Any] | None = None,
) -> Converted:
    """Read ``source`` as predictions or truth and write it to ``target`` ("-": stdout)."""
    if kind is not None and kind not in KINDS:
        raise OptionError(f"{{option}} must be one of {', '.join(KINDS)}, got {kind!r}", "kind")
    ties = ROWS["ties"].check(ties)
    if ties in ("expected", "optimistic", "pessimistic"):
        raise OptionError(f"{{option}} {ties} scores ties fairly when evaluating; a converted "
                          "file holds one order: use trec, item-asc or input", "ties")
    check_writable(target, "OUT")
    check_distinct({"OUT": target}, [source])
    in_fmt = detect_format(source, input_format, "{opt:input_format}")
    out_fmt = (detect_format(target, output_format, "{opt:output_format}", reading=False)
               if target != STDOUT or output_format else None)
    if out_fmt is None:
        raise OptionError("{option} is required when writing to '-' (standard output)",
                          "output_format")
    kind = kind or _kind_from_name(source) or _kind_from_name(target)
    if kind is None and (in_fmt == "json" or (in_fmt == "trec" and source == STDIN)):
        raise OptionError(f"{source}: cannot tell a run from qrels here: say which with {{option}}",
                          "kind")
    if kind is None and in_fmt == "trec":
        table, kind = _open_trec_either(source, reading or {})
    else:
        table = open_table(source, in_fmt, "{opt:input_format}", role=kind or "predictions",
                           **(reading or {}))
        kind = kind or _kind_from_columns(table, relevance_col)

    if out_fmt == "trec":
        _check_trec_field("--tag", [tag])
    notices: list[Notice] = []
    if kind == "predictions":
        preds = load_predictions(table, user_col, item_col, rank_col, score_col)
        out = _predictions_table(preds, out_fmt, ties, dedupe, notices)
    else:
        truth = load_truth(table, user_col, item_col, relevance_col)
        (user, item), items = factorize(truth.user, truth.item)
        dup = duplicates(pair_keys(user, item, max(len(items), 1)))
        if len(dup):  # as score: a repeated judgement is always an error
            report_duplicates(truth, dup, None)
        columns = {"user_id": truth.user, "item_id": truth.item, "relevance": truth.relevance}
        # pyarrow-stubs: table() maps names to Arrays or lists; pyarrow takes chunked and
        # numpy arrays too
        out = pa.table(columns)  # type: ignore[arg-type]
    if out_fmt == "trec":
        for column in ("user_id", "item_id"):
            _check_trec_field(column, out.column(column).unique().to_pylist(), table.label)
    data = _encode(out, out_fmt, kind, tag)
    _write(target, data, out_fmt, out)
    def shown(fmt: str) -> str:  # TREC is a run or qrels, as the user knows it
        return ("run" if kind == "predictions" else "qrels") if fmt == "trec" else fmt

    return Converted(kind, out.num_rows, shown(in_fmt), shown(out_fmt), notices)


def _kind_from_name(path: str) -> str | None:
    suffixes = [s.lower() for s in Path(path).suffixes if s.lower() != ".gz"]
    return _KIND_BY_SUFFIX.get(suffixes[-1]) if suffixes else None


def _open_trec_either(source: str, reading: dict) -> tuple[Table, str]:
    """A TREC file of unknown kind: a run if it has a run's 6 fields, else qrels (4 fields)."""
    try:
        return open_table(source, "trec", "", role="predictions", **reading), "predictions"
    except InputError as as_run:
        try:
            return open_table(source, "trec", "", role="truth", **reading), "truth"
        except InputError:
            raise as_run from None


def _kind_from_columns(table: Table, relevance_col: str | None) -> str:
    names = {c.lower() for c in table.columns}
    default, aliases = COLUMNS["relevance"]
    wanted = {relevance_col.lower()} if relevance_col else {default, *map(str.lower, aliases)}
    return "truth" if names & wanted else "predictions"


def _predictions_table(
    preds: Predictions, out_fmt: str, ties: str, dedupe: bool, notices: list[Notice]
) -> pa.Table:
    """The rows to write: repeated (user, item) pairs refused, or with ``dedupe`` the
    best-ranked kept, as ``score`` does; TREC and JSON in ranking order with a score that
    keeps it, other formats in the file's row order."""
    (user, item), items = factorize(preds.user, preds.item)
    order = order_rows(user, item, preds.rank, preds.score, ties)
    if order is None:  # already in ranking order
        order = np.arange(len(user))
    keys = pair_keys(user[order], item[order], max(len(items), 1))
    first = first_index(keys)
    if len(first) < len(keys):
        if not dedupe:
            dup = duplicates(pair_keys(user, item, max(len(items), 1)))
            report_duplicates(preds, dup, "{opt:dedupe} keeps the best-ranked one")
        notices.append(Notice("duplicates_dropped", len(keys) - len(first),
                              {"path": preds.source.label}))
        order = order[np.sort(first)]
    if out_fmt not in ("trec", "json"):
        rows = np.sort(order)  # the file's order, without the dropped repeats
        columns: dict[str, pa.Array | pa.ChunkedArray] = {
            "user_id": preds.user.take(from_numpy(rows)),
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
        "item_id": preds.item.take(take),
        "rank": from_numpy(rank),
        "score": from_numpy(score),
    }
    # pyarrow-stubs: table() maps names to Arrays or lists; pyarrow takes chunked arrays
    return pa.table(columns)  # type: ignore[arg-type]


def _check_trec_field(what: str, values: list, label: str | None = None) -> None:
    """TREC fields are separated by whitespace: an id or tag that is empty or holds any
    cannot be written (``score`` would refuse or misread the file)."""
    bad = [v for v in values if not v or any(ch.isspace() for ch in str(v))]
    if bad:
        where = f"{label}: column '{what}'" if label else what
        raise OptionError(f"{where}: {plural(len(bad), 'value')} cannot be written in TREC "
                          f"format (empty or with whitespace), e.g. {bad[:3]!r}; write CSV, "
                          "TSV, Parquet or JSON instead")


def _encode(table: pa.Table, fmt: str, kind: str, tag: str) -> bytes | None:
    """Text formats as bytes; None for Parquet, which is written by pyarrow directly."""
    if fmt == "parquet":
        return None
    if fmt in ("csv", "tsv"):
        return csv_bytes(table, "," if fmt == "csv" else "\t")
    if fmt == "jsonl":
        return write_jsonl(table)
    if fmt == "json":
        return write_json(table, kind)
    return write_run(table, tag) if kind == "predictions" else write_qrels(table)


def _write(target: str, data: bytes | None, fmt: str, table: pa.Table) -> None:
    if data is None:  # Parquet
        if target == STDOUT:
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink)
            write_bytes(target, sink.getvalue().to_pybytes())
        else:
            write_atomic(target, lambda tmp: pq.write_table(table, tmp))
        return
    if target != STDOUT and target.lower().endswith(".gz"):
        data = gzip.compress(data)
    write_bytes(target, data)
