"""The TREC layouts, both ways: runs (``qid Q0 docno rank score tag``) and qrels
(``qid iter docno rel``)."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.csv as pa_csv

from rankeval.errors import InputError

# TREC layouts: the number of fields, their names, and the columns kept (by position).
LAYOUTS = {
    "predictions": (6, "qid Q0 docno rank score tag", {0: "user_id", 2: "item_id", 4: "score"}),
    "truth": (4, "qid iter docno rel", {0: "user_id", 2: "item_id", 3: "relevance"}),
}

_SPACES = re.compile(rb"[ \t\r\f\v]+")


def parse_trec(data: bytes, role: str, label: str) -> pa.Table:
    """A TREC run (``qid Q0 docno rank score tag``) or qrels (``qid iter docno rel``) file.

    Fields are separated by any whitespace. As in trec_eval, a run's rank column is not used:
    the score orders the list. A line with the wrong number of fields is an error naming it.
    """
    n_fields, layout, keep = LAYOUTS[role]
    text = _SPACES.sub(b" ", data)  # one space between fields, as the CSV parser needs
    text = re.sub(rb"(?m)^ | $", b"", text).rstrip(b"\n")
    blank = [m.start() for m in re.finditer(rb"(?m)^$", text)]
    if not text:
        raise InputError(label, "no data lines")
    if blank:
        lines = [text.count(b"\n", 0, at) + 1 for at in blank]
        raise InputError(
            label, "blank lines", count=len(lines), examples=[(n, "") for n in lines],
            unit="line",
        )
    names = [f"f{i}" for i in range(n_fields)]
    try:
        # pyarrow-stubs: read_csv takes paths and Python files; pyarrow also its own
        table = pa_csv.read_csv(
            pa.BufferReader(text),  # type: ignore[arg-type]
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=True),
            parse_options=pa_csv.ParseOptions(delimiter=" ", quote_char=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                include_columns=[names[i] for i in keep],
                strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        _raise_field_count(text, n_fields, layout, label)
        raise
    return pa.table([table.column(names[i]) for i in keep], names=list(keep.values()))


def _raise_field_count(text: bytes, n_fields: int, layout: str, label: str) -> None:
    counts = [len(line.split(b" ")) for line in text.split(b"\n")]  # only on the error path
    bad = [n for n, c in enumerate(counts, 1) if c != n_fields]
    if bad:
        lines = text.split(b"\n")
        other = {6: (4, "a qrels file: give it as TRUTH"), 4: (6, "a run: give it as PREDS")}
        fields, what = other[n_fields]
        hint = f"{len(bad)} of them have {fields} fields, as in {what}" if all(
            counts[n - 1] == fields for n in bad) else None
        if all(counts[n - 1] > n_fields for n in bad):  # trailing words (trec_eval skips them)
            hint = (f"they have more than {n_fields} fields: trec_eval ignores what follows the "
                    f"{n_fields}th, rankeval does not guess; keep the first {n_fields}, e.g. "
                    f"cut -d' ' -f1-{n_fields}")
        raise InputError(
            label, f"lines without the {n_fields} fields '{layout}'", count=len(bad),
            examples=[(n, lines[n - 1].decode("utf-8", "replace")) for n in bad[:5]],
            unit="line", hint=hint,
        )




def number(x: float) -> int | float:
    """A relevance or score as written: ``2`` rather than ``2.0``."""
    return int(x) if float(x).is_integer() else x


def write_run(table: pa.Table, tag: str) -> bytes:
    """A run in ranking order (columns user_id, item_id, rank, score) as TREC lines."""
    cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", "rank", "score")]
    return "".join(
        f"{u} Q0 {i} {r} {s!r} {tag}\n" for u, i, r, s in zip(*cols, strict=True)
    ).encode()


def write_qrels(table: pa.Table) -> bytes:
    """Truth (columns user_id, item_id, relevance) as qrels lines."""
    cols = [table.column(n).to_pylist() for n in ("user_id", "item_id", "relevance")]
    return "".join(f"{u} 0 {i} {number(r)}\n" for u, i, r in zip(*cols, strict=True)).encode()
