"""The TREC layouts, both ways: runs (``qid Q0 docno rank score tag``) and qrels
(``qid iter docno rel``)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

from rankeval.errors import InputError, OptionError, plural
from rankeval.io.arrow import string_buffers
from rankeval.io.cast import ID
from rankeval.io.one_width import read_plain

# TREC layouts: the number of fields, their names, and the columns kept (by position).
LAYOUTS = {
    # the Q0 field holds the sample of a stochastic run (expeval's), else one value: ignored
    "predictions": (6, "qid Q0 docno rank score tag", {0: "user_id", 1: "sample",
                                                       2: "item_id", 4: "score"}),
    # the iteration field holds the subtopic in diversity qrels (ndeval's qid subtopic docno rel)
    "truth": (4, "qid iter docno rel", {0: "user_id", 1: "subtopic", 2: "item_id",
                                         3: "relevance"}),
}

_OTHER_SPACES = bytes.maketrans(b"\t\r\f\v", b"    ")
_OTHER_BLANKS = (b"\t", b"\r", b"\f", b"\v")
_SPACES = re.compile(rb"  +")
_EDGES = re.compile(rb"(?m)^ | $")


def _one_space(data: bytes) -> bytes:
    """The text with one space between fields and none at either end of a line, as the CSV
    parser needs. Each pass runs only where the text needs it (found by a byte search at C
    speed): a file written with single spaces is the same object, never a copy (a 5M-line
    run is 200 MB; each copy of it was held to the end of the read)."""
    text = data
    if any(blank in data for blank in _OTHER_BLANKS):
        text = data.translate(_OTHER_SPACES)  # tabs and the rest of whitespace: spaces
    if b"  " in text:
        text = _SPACES.sub(b" ", text)
    if text.startswith(b" ") or b"\n " in text or b" \n" in text or text.endswith(b" "):
        text = _EDGES.sub(b"", text)
    return text


def _end(text: bytes) -> int:
    """Where the text ends without the newlines at its end (found without a copy)."""
    tail = text[-4096:]
    kept = len(tail.rstrip(b"\n"))
    return len(text) - len(tail) + kept if kept else len(text.rstrip(b"\n"))


def parse(data: bytes, role: str, label: str) -> pa.Table:
    """A TREC run (``qid Q0 docno rank score tag``) or qrels (``qid iter docno rel``) file.

    Fields are separated by any whitespace. As in trec_eval, a run's rank column is not used:
    the score orders the list; a line whose first field starts with ``#`` is a comment
    (trec_eval 10.0), and fields after the layout's are ignored (trec_eval's own
    ``results.trunc``), which the table's metadata counts for a warning. The metadata also
    keeps the tag of a run's last line: trec_eval's ``runid``. A line with too few fields is
    an error naming it. A file written with single spaces is read in one pass
    (``_as_written``), any other through the passes it needs (``spaced``): the same table.
    """
    n_fields, _, keep = LAYOUTS[role]
    table = _as_written(data, n_fields)
    if table is None:
        return spaced(data, role, label)
    notes = {b"rankeval.extra_fields": b"0"}
    if role == "predictions":  # trec_eval's runid: the tag of the last line
        notes[b"rankeval.tag"] = table.column(n_fields - 1)[-1].as_py().encode()
    return pa.table([table.column(f"f{i}") for i in keep], names=list(keep.values()),
                    metadata=notes)


def spaced(data: bytes, role: str, label: str) -> pa.Table:
    """``parse`` for a file with any whitespace between fields, comments, blank lines (an
    error), or more or fewer fields than the layout's."""
    n_fields, layout, keep = LAYOUTS[role]
    text = _one_space(data)
    del data  # the caller's reference alone keeps it, when a copy was made
    end = _end(text)  # what follows is newlines only
    numbers = None  # the file's line number of each line kept, when comments are dropped
    if text.startswith(b"#") or b"\n#" in text:
        lines = text[:end].split(b"\n")
        numbers = [n for n, line in enumerate(lines, 1) if not line.startswith(b"#")]
        text = b"\n".join(lines[n - 1] for n in numbers)
        end = len(text)
    if not end:
        raise InputError(label, "no data lines")
    # (a blank line before comments alone ends the text kept: it is a line all the same)
    if text.startswith(b"\n") or text.find(b"\n\n", 0, end) >= 0 or text.endswith(b"\n", 0, end):
        text = text[:end]
        blank = [m.start() for m in re.finditer(rb"(?m)^$", text)]
        where = [_number_of(text.count(b"\n", 0, at) + 1, numbers) for at in blank]
        raise InputError(
            label, "blank lines", count=len(where), examples=[(n, "") for n in where],
            unit="line",
        )
    extra = 0
    plain = _plain_ids(text, n_fields)
    try:
        table = _read(pa.py_buffer(text).slice(0, end), n_fields, keep, plain=plain)
    except pa.ArrowInvalid:
        text, extra = _first_fields(text[:end], n_fields, layout, label, numbers)
        end = len(text)
        table = _read(pa.py_buffer(text), n_fields, keep, plain=plain)
    notes = {b"rankeval.extra_fields": str(extra).encode()}
    if numbers is not None:  # the first comment line, which trec_eval 9.0.8 refuses
        notes[b"rankeval.comment"] = str(next(
            n for n, kept in enumerate([*numbers, 0], 1) if n != kept)).encode()
    if role == "predictions":  # trec_eval's runid: the tag of the last line
        notes[b"rankeval.tag"] = text[text.rfind(b"\n", 0, end) + 1:end].split(b" ")[5]
    return pa.table([table.column(f"f{i}") for i in keep], names=list(keep.values()),
                    metadata=notes)


def _as_written(data: bytes, n_fields: int) -> pa.Table | None:
    """Every field of a file written as trec_eval's own tools write it (one space between
    fields, none at either end of a line, no comment, no blank line), or None for any other
    file, which ``parse`` then reads through the passes it needs. Arrow's parser finds the
    rest on its own, on both cores: a blank line, a line with a space at either end or
    another number of fields stops it; a doubled space it reads as an empty field, and a
    comment as a first field that starts with ``#``, both found in the parsed columns. What
    it cannot tell is a blank other than the space, one byte search each. Each of the
    passes of ``_one_space`` and ``parse`` is a search for two bytes of which the first
    is on every line (0.46 s each on a 420 MB run, 5 of them)."""
    end = _end(data)
    if not end or any(blank in data for blank in _OTHER_BLANKS):
        return None
    try:
        table = _read(pa.py_buffer(data).slice(0, end), n_fields, range(n_fields), strict=True,
                      plain=_plain_ids(data, n_fields))
    except pa.ArrowInvalid:
        return None
    for i, column in enumerate(table.columns):
        for chunk in column.chunks:
            values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk
            offsets, chars = string_buffers(values)
            if not len(values):
                continue
            if chars is None or (np.diff(offsets) == 0).any():
                return None  # an empty field: two spaces in a row
            if i == 0 and (chars[offsets[:-1]] == ord("#")).any():
                return None  # a comment line with as many words as a line has fields
    return table


# Fields read as ids (the query and the docno): dictionary-encoded by the parser, block by
# block on both cores, as the CSV reader reads ids (``io.cast.ID``), unless ``_plain_ids``
_IDS = (0, 2)
_LOOK_BYTES = 64 << 10  # the look at a file's first lines: about 1,000 of them
_LOOK_FILES = 4 << 20  # bytes from which a file is looked at (the look costs a millisecond)


def _plain_ids(data: bytes, n_fields: int) -> tuple[int, ...]:
    """The id fields read as plain text: those whose values in the file's first lines do
    not repeat and would each be packed into a number (``one_width.read_plain``: docnos of
    a run over a large collection), as the CSV reader decides (``delimited._plain_ids``)."""
    if len(data) < _LOOK_FILES:
        return ()
    head = data[: data.rfind(b"\n", 0, _LOOK_BYTES) + 1]
    try:
        sample = _read(pa.py_buffer(head), n_fields, _IDS, plain=_IDS)
    except pa.ArrowInvalid:
        return ()
    return tuple(i for i in _IDS if read_plain(sample.column(f"f{i}").combine_chunks()))


def _read(text: pa.Buffer, n_fields: int, keep, strict: bool = False,
          plain: tuple[int, ...] = ()) -> pa.Table:
    """The fields ``keep`` (positions) of single-spaced lines, ids as dictionaries but for
    ``plain``. ``strict``: a blank line is an error (else the parser passes over it)."""
    names = [f"f{i}" for i in range(n_fields)]
    # pyarrow-stubs: read_csv takes paths and Python files; pyarrow also its own
    return pa_csv.read_csv(
        pa.BufferReader(text),  # type: ignore[arg-type]
        read_options=pa_csv.ReadOptions(column_names=names, use_threads=True),
        parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False,
                                          ignore_empty_lines=not strict),
        convert_options=pa_csv.ConvertOptions(
            column_types={n: ID if i in _IDS and i not in plain else pa.string()
                          for i, n in enumerate(names)},
            include_columns=[names[i] for i in keep],
            strings_can_be_null=False,
        ),
    )


def _number_of(line: int, numbers: list[int] | None) -> int:
    """The file's number of a line of the text without comments."""
    return line if numbers is None else numbers[line - 1]


def _first_fields(text: bytes, n_fields: int, layout: str, label: str,
                  numbers: list[int] | None) -> tuple[bytes, int]:
    """The text with each line cut to its first ``n_fields`` fields, and how many lines
    had more (trec_eval reads the first ones); an error naming the lines with fewer."""
    lines = text.split(b"\n")  # only on this path: the fast read failed
    counts = [line.count(b" ") + 1 for line in lines]
    short = [n for n, c in enumerate(counts, 1) if c < n_fields]
    if n_fields == 4 and all(c >= 6 for c in counts):  # every line a run's: not a qrels file
        short = list(range(1, len(lines) + 1))
    if short:
        other = {6: (4, "a qrels file: give it as TRUTH"), 4: (6, "a run: give it as PREDS")}
        fields, what = other[n_fields]
        hint = (f"{len(short)} of them have {plural(fields, 'field')}, as in {what}"
                if all(counts[n - 1] == fields or counts[n - 1] > fields == 6 for n in short)
                else None)
        raise InputError(
            label, f"lines without the {plural(n_fields, 'field')} '{layout}'", count=len(short),
            examples=[(_number_of(n, numbers), lines[n - 1].decode("utf-8", "replace"))
                      for n in short[:5]],
            unit="line", hint=hint,
        )
    long = sum(c > n_fields for c in counts)
    cut = [b" ".join(line.split(b" ", n_fields)[:n_fields]) for line in lines]
    return b"\n".join(cut), long


def number(x: float) -> int | float:
    """A relevance or score as written: ``2`` rather than ``2.0``."""
    return int(x) if float(x).is_integer() else x


def write_run(table: pa.Table, tag: str) -> bytes:
    """A run in ranking order (columns user_id, item_id, rank, score) as TREC lines."""
    cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", "rank", "score")]
    samples = (table.column("sample").to_pylist() if "sample" in table.column_names
               else ["Q0"] * table.num_rows)  # a stochastic run's sample in the Q0 field
    return "".join(
        f"{u} {q} {i} {r} {s!r} {tag}\n" for u, q, i, r, s in zip(*cols[:1], samples,
                                                                   *cols[1:], strict=True)
    ).encode()


def write_qrels(table: pa.Table) -> bytes:
    """Truth (columns user_id, item_id, relevance; subtopic, written as the iteration field,
    when there are subtopics) as qrels lines."""
    users, items = (table.column(n).to_pylist() for n in ("user_id", "item_id"))
    grades = table.column("relevance").to_numpy()
    subs = (table.column("subtopic").to_pylist() if "subtopic" in table.column_names
            else ["0"] * table.num_rows)
    return "".join(f"{u} {s} {i} {number(r)}\n"
                   for u, s, i, r in zip(users, subs, items, grades, strict=True)).encode()


def encode(table: pa.Table, fmt: str, kind: str, tag: str, label: str) -> bytes:
    """A run (in ranking order: user_id, item_id, rank, score) or qrels (user_id, item_id,
    relevance) as TREC lines; ids with whitespace cannot be written."""
    check_tag(tag)
    for column in ("user_id", "item_id", *(c for c in ("subtopic", "sample")
                                           if c in table.column_names)):
        check_field(f"{label}: column '{column}'", table.column(column).unique().to_pylist())
    return write_run(table, tag) if kind == "predictions" else write_qrels(table)


def check_tag(tag: str) -> None:
    """Before reading anything: the run tag can be written."""
    check_field("--tag", [tag])


def check_field(what: str, values: list, reserved: tuple[str, ...] = ()) -> None:
    """TREC fields are separated by whitespace: an id or tag that is empty or holds any
    cannot be written (``score`` would refuse or misread the file); nor can a ``reserved``
    word (trec_eval's summary lines are the query ``all``)."""
    bad = [v for v in values if not v or any(ch.isspace() for ch in str(v))
           or str(v) in reserved]
    if bad:
        taken = f", or {' or '.join(repr(r) for r in reserved)}" if reserved else ""
        raise OptionError(f"{what}: {plural(len(bad), 'value')} cannot be written in TREC "
                          f"format (empty, with whitespace{taken}), e.g. {bad[:3]!r}; write "
                          "CSV, TSV, Parquet or JSON instead")


def spark_read(spark, path: str, fmt: str, role: str, reading: dict[str, Any]):
    """A TREC run or qrels file split on runs of whitespace, the columns of the local reader
    (``LAYOUTS``: a run's rank field is not read; the score orders, as in
    trec_eval). Blank lines and lines with another number of fields are refused, as locally
    (counted; a cluster keeps no line numbers)."""
    from pyspark.sql import functions as F  # optional dependency: pyspark


    n_fields, layout, keep = LAYOUTS[role]
    text = F.trim(F.col("value"))
    fields = F.split(text, r"\s+")
    lines = spark.read.text(path)
    counts = lines.agg(F.count(F.when(text == "", 1)).alias("blank"),
                       F.count(F.when((text != "") & (F.size(fields) != n_fields), 1))
                       .alias("bad"), F.count(F.lit(1)).alias("lines")).collect()[0]
    if not counts["lines"]:
        raise InputError(path, "no data lines")
    if counts["blank"]:
        raise InputError(path, "blank lines", count=int(counts["blank"]), unit="line")
    if counts["bad"]:
        raise InputError(path, f"lines without the {plural(n_fields, 'field')} '{layout}'",
                         count=int(counts["bad"]), unit="line")
    return lines.select(*[fields.getItem(i).alias(name) for i, name in keep.items()])
