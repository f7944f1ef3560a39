"""Preferences as the truth (``preferences``; trec_eval's ``-R prefs`` and ``-R qrels_prefs``):
a TREC-layout file of ``qid group subgroup docno level`` lines (trec_eval's prefs file) or
plain qrels ``qid group docno level`` (each query's second field its judgment group, one
subgroup), told apart by the number of fields; a table: user, item and relevance columns, a
``subtopic`` column (or ``subtopic_col``) naming the group and an optional ``subgroup``.

Ids become codes in their byte order (trec_eval compares them with strcmp) for
``kernels.preferences``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from rankeval.errors import InputError
from rankeval.io.arrow import to_numpy
from rankeval.io.cast import ID
from rankeval.io.checked import id_column, read_typed
from rankeval.io.columns import resolve_role
from rankeval.io.load import Predictions, load_predictions, load_truth, open_input
from rankeval.io.readers import Table

# the layouts by number of fields: trec_eval's -R format and the fields' names
LAYOUTS = {5: ("prefs", "qid group subgroup docno level"),
           4: ("qrels_prefs", "qid group docno level")}
SUBGROUP = "subgroup"  # a table's subgroup column; without one, every group has one subgroup


@dataclass(frozen=True)
class Preferences:
    """The preference rows, as read."""

    user: pa.Array  # strings
    group: pa.Array
    subgroup: pa.Array
    item: pa.Array
    level: np.ndarray  # float64
    layout: str  # "prefs", "qrels_prefs" or "table"
    line: np.ndarray  # each row's line (row) number in its file, for messages
    label: str
    comment: int | None = None  # the line number of a TREC file's first '#' comment line


def load(predictions: Any, truth: Any, columns: Mapping[str, str | None] | None,
         preds_format: str | None, truth_format: str | None,
         reading: Mapping[str, Any] | None) -> tuple[Predictions, Preferences]:
    """The run (``load.load_predictions``) and the preferences."""
    cols = columns or {}
    run_table = open_input(predictions, "predictions", preds_format, reading)
    preds = load_predictions(run_table, cols)
    if preds.sample is not None:
        raise InputError(run_table.label, "a stochastic run (a sample column) cannot be "
                         "scored by preferences; drop {opt:preferences}")
    if preds.score is None:
        raise InputError(run_table.label, "preferences order each list by score (as trec_eval "
                         "does): the run needs a score column")
    table = open_input(truth, "truth", truth_format, reading)
    if isinstance(table, Table) and table.format == "trec":
        return preds, parse(table.raw(), table.label)
    return preds, _from_table(table, cols)


_BLANKS = re.compile(rb"[ \t\r\f\v]+")
_EDGES = re.compile(rb"(?m)^ | $")


def parse(data: bytes, label: str) -> Preferences:
    """A prefs file (5 fields) or qrels (4), whitespace-separated; '#' lines are comments."""
    text = data  # one space between fields, none at a line's ends: each pass where needed
    if any(blank in text for blank in (b"\t", b"\r", b"\f", b"\v", b"  ")):
        text = _BLANKS.sub(b" ", text)
    if text.startswith(b" ") or b"\n " in text or b" \n" in text or text.endswith(b" "):
        text = _EDGES.sub(b"", text)
    text = text.rstrip(b"\n")
    numbers: np.ndarray | None = None  # each kept line's number, when comments are dropped
    comment = None
    if text.startswith(b"#") or b"\n#" in text:  # comments: the lines split, once
        lines = text.split(b"\n")
        kept = [n for n, line in enumerate(lines, 1) if not line.startswith(b"#")]
        comment = next(n for n, k in enumerate([*kept, 0], 1) if n != k)
        numbers = np.asarray(kept, dtype=np.int64)
        text = b"\n".join(lines[n - 1] for n in kept)
    if not text:
        raise InputError(label, "no data lines")
    if text.startswith(b"\n") or b"\n\n" in text:
        blank = [n for n, line in enumerate(text.split(b"\n"), 1) if not line]
        raise InputError(label, "blank lines", count=len(blank),
                         examples=[(_line(n, numbers), "") for n in blank[:3]], unit="line")
    fields = text[:text.find(b"\n") if b"\n" in text else len(text)].count(b" ") + 1
    names = [f"f{i}" for i in range(fields)]
    try:
        if fields not in LAYOUTS:
            raise pa.ArrowInvalid("layout")
        parsed = pa_csv.read_csv(
            pa.BufferReader(text),  # type: ignore[arg-type]
            read_options=pa_csv.ReadOptions(column_names=names),
            parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                  strings_can_be_null=False))
    except pa.ArrowInvalid:
        lines = text.split(b"\n")
        odd = [n for n, line in enumerate(lines, 1) if line.count(b" ") + 1 not in LAYOUTS
               or line.count(b" ") + 1 != fields] or [1]
        raise InputError(label, "preferences have 5 fields a line (qid group subgroup docno "
                         "level: trec_eval's prefs) or 4 (qrels: qid group docno level)",
                         count=len(odd), examples=[(_line(n, numbers),
                                                    lines[n - 1].decode(errors="replace"))
                                                   for n in odd[:3]], unit="line") from None
    cols = [parsed.column(n).combine_chunks() for n in names]
    n_rows = len(cols[0])
    line = numbers if numbers is not None else np.arange(1, n_rows + 1, dtype=np.int64)
    subgroup = cols[2] if fields == 5 else pa.array(np.full(n_rows, "0"), pa.string())
    return Preferences(user=cols[0], group=cols[1], subgroup=subgroup, item=cols[-2],
                       level=_levels(cols[-1], line, label), layout=LAYOUTS[fields][0],
                       line=line, label=label, comment=comment)


def _line(n: int, numbers: np.ndarray | None) -> int:
    """The file's number of the ``n``th line kept."""
    return n if numbers is None else int(numbers[n - 1])


def _levels(text: pa.Array, line: np.ndarray, label: str) -> np.ndarray:
    """The levels as numbers (trec_eval's atof reads a word as 0: refused here)."""
    try:
        return to_numpy(pc.cast(text, pa.float64()))
    except pa.ArrowInvalid:
        bad = [i for i, v in enumerate(text.to_pylist()) if not _number(v)]
        raise InputError(label, "levels that are not numbers", count=len(bad),
                         examples=[(int(line[i]), text[i].as_py()) for i in bad[:3]],
                         unit="line") from None


def _number(word: str | None) -> bool:
    try:
        float(word or "")
    except ValueError:
        return False
    return True


def _from_table(table, cols: Mapping[str, str | None]) -> Preferences:
    """A table's preferences: user, item, relevance, the group's column (subtopic) and an
    optional subgroup column."""
    judged = load_truth(table, cols)  # the group's column is read below, not as subtopics
    label = table.label
    name = resolve_role(table.columns, "truth", {
        "user_col": cols.get("user_col"), "item_col": cols.get("item_col"),
        "relevance_col": cols.get("relevance_col"),
        "subtopic_col": cols.get("subtopic_col")}, label)["subtopic"]
    if name is None:
        raise InputError(label, "preferences need a judgment group column: a qrels file's "
                         "second field, or a column named subtopic (name it with "
                         "{opt:subtopic_col})")
    group = id_column(read_typed(table, {name: ID}), name, label)
    n = len(judged.relevance)
    if SUBGROUP in table.columns:
        subgroup = id_column(read_typed(table, {SUBGROUP: ID}), SUBGROUP, label)
    else:
        subgroup = pa.chunked_array([pa.array(np.full(n, "0"), pa.string())])
    return Preferences(
        user=_strings(judged.user), group=_strings(group), subgroup=_strings(subgroup),
        item=_strings(judged.item), level=np.asarray(judged.relevance, dtype=np.float64),
        layout="table", line=np.arange(1, n + 1, dtype=np.int64), label=label)


def _strings(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    out = column.cast(pa.string())
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def codes(*arrays: pa.Array) -> tuple[list[np.ndarray], pa.Array]:
    """The arrays' values as codes numbered in their byte order (strcmp's), shared by all,
    and the values by code."""
    whole = pa.concat_arrays([_strings(a) for a in arrays])
    coded = whole.dictionary_encode()
    names = coded.dictionary
    by_bytes = to_numpy(pc.sort_indices(names))
    place = np.empty(len(names), dtype=np.int64)
    place[by_bytes] = np.arange(len(names))
    code = place[to_numpy(coded.indices)] if len(whole) else np.empty(0, dtype=np.int64)
    out, start = [], 0
    for a in arrays:
        out.append(code[start:start + len(a)])
        start += len(a)
    return out, names.take(pa.array(by_bytes))
