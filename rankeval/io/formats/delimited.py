"""CSV and TSV: a header row, then delimited rows, parsed by Arrow block by block on both
cores. Integer columns are read by Arrow's float parser (its integer parser takes hexadecimal),
and ids that look numbered over a span direct addressing codes, or that a key holds whole and
that do not repeat, are read as plain text (see ``_plain_ids``)."""

from __future__ import annotations

import csv
from math import inf
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from rankeval.errors import InputError, one_line
from rankeval.io.cast import ID, numbered_ids, raise_non_numeric
from rankeval.io.codes import addressable
from rankeval.io.one_width import ONCE_SHARE, read_plain
from rankeval.io.options import own_option
from rankeval.io.output import csv_bytes
from rankeval.kernels.distinct import count_distinct

if TYPE_CHECKING:
    from rankeval.io.readers import Table


DELIMITERS = {"csv": ",", "tsv": "\t", "recbole": "\t"}
_BLOCK_BYTES = 4 << 20  # both cores busy on small files; big ones 5-25% faster than 16 MiB
_SMALL = 4 << 20  # bytes of text under which ids are read as plain text without a look
_LOOK_BYTES = 64 << 10  # the look: about 2,000 rows, parsed in a millisecond
_UNKNOWN_ROWS = 1 << 32  # the rows of a file of unknown size, for the look's span rule


def columns(t: Table) -> list[str]:
    """The header's names (a header with ``;`` and no comma is read with ``;``)."""
    try:
        with t.open() as fh:
            first = fh.readline(1 << 20)
    except (OSError, EOFError) as exc:
        raise InputError(t.label, f"cannot read: {one_line(exc)}") from None
    text = first.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
    if not text.strip():
        raise InputError(t.label, "file is empty" if not first else "the header line is empty")
    if not t.delimiter_given and t.format == "csv" and "," not in text and ";" in text:
        t.delimiter = ";"  # a spreadsheet export in a comma-decimal locale
    try:
        return next(csv.reader([text], delimiter=t.delimiter))
    except csv.Error as exc:
        raise InputError(t.label, f"cannot read the header line: {exc}") from None


def nested(t: Table, name: str) -> None:
    """Text has no nested types."""
    return None


def read(t: Table, types: dict[str, pa.DataType]) -> pa.Table:
    """The columns in ``types``, converted to those types."""
    return _read_integers(t, _plain_ids(t, types))


def encode(table: pa.Table, fmt: str, kind: str, tag: str, label: str) -> bytes:
    return csv_bytes(table, DELIMITERS[fmt])


def spark_read(spark, path: str, fmt: str, role: str, reading: dict[str, Any]):
    """Every column as text, so that numbers are parsed and checked by rankeval."""
    sep = reading.get("delimiter") or DELIMITERS[fmt]
    return spark.read.options(header=True, sep=sep, inferSchema=False, mode="FAILFAST",
                              enforceSchema=False, encoding=reading.get("encoding") or "utf-8"
                              ).csv(path)


def _plain_ids(t: Table, types: dict[str, pa.DataType]) -> dict[str, pa.DataType]:
    """Ids that look numbered in the first 64 KiB (``7``, ``tt0111161``: ``numbered_ids``),
    over a span that direct addressing codes (``io.codes.addressable``, for as many rows as
    the file holds at the look's bytes per row), are read as plain text, however often they
    repeat: hashing every row into a dictionary per block while parsing costs more than
    ``factorize`` then spends reading them as numbers (1M users x 10 rows: the read 0.54 ->
    0.45 s, the users' encoding, beside the items', 0.11 -> 0.15 s). Numbers spread wider
    (64-bit hashes) would be hashed row by row after the parse: the reader's dictionary
    does that hashing per block, in the cache, and leaves ``factorize`` each block's
    distinct ids to parse and code (10M rows of hashed ids: 0.94x the time, 0.59x the
    peak memory), when they repeat. Ids that do not repeat in the look (a catalog drawn
    uniformly, never twice in 2,000 rows) leave the block dictionaries as long as the
    blocks: they are read as plain text, hashed once (772k rows of sparse numbers over 1.4M
    items: 0.87x the time, 0.93x the peak; 6.4M rows of 64-bit hashes over 5M items: 0.85x,
    0.94x). Zipf-popular items repeat in 30-75% of the look's rows, and keep the dictionary.
    Text ids that do not repeat in the look are read as plain text too when a key would
    hold each whole (``one_width.packable``: ASINs, TREC docnos), since ``factorize`` then
    packs each row's id into a number and hashes none (5M rows of ASIN-like ids over 5M
    items: the read 1.34 -> 0.78 s, the coding 1.11 -> 0.88 s); others (UUIDs) keep the
    reader's per-block hash, cheaper than the one ``factorize`` would do on every row."""
    ids = [name for name, typ in types.items() if typ == ID]
    if not ids:
        return types
    if t.size() <= _SMALL:  # the look would cost as much as any saving
        return {name: pa.string() if typ == ID else typ for name, typ in types.items()}
    try:
        head = t.head(_LOOK_BYTES)
        head = head[: head.rfind(b"\n") + 1]
        options = _options(t, {name: pa.string() for name in ids})
        # pyarrow-stubs: read_csv takes paths and Python files; pyarrow also its own
        sample = pa_csv.read_csv(pa.BufferReader(head), **options)  # type: ignore[arg-type]
    except (pa.ArrowException, OSError, EOFError, ValueError):
        return types  # the full read says what is wrong
    size = t.size()  # the file's rows, estimated; unknown (gzip): more than any file holds
    rows = sample.num_rows * int(size) // max(len(head), 1) if size < inf else _UNKNOWN_ROWS

    def plain(name: str) -> bool:
        numbered = numbered_ids(sample.column(name))
        if numbered is None:
            return read_plain(sample.column(name).combine_chunks())
        values = numbered.values
        return addressable(int(values.min()), int(values.max()), rows) or (
            count_distinct(values) >= ONCE_SHARE * len(values))

    return {name: pa.string() if typ == ID and plain(name) else typ
            for name, typ in types.items()}


def _options(t: Table, types: dict[str, pa.DataType], newlines_in_values: bool = False):
    return dict(
        # names of the reader's own (RecBole's without types) in place of the header line
        read_options=pa_csv.ReadOptions(use_threads=True, block_size=_BLOCK_BYTES,
                                        column_names=t.header, skip_rows=1 if t.header else 0),
        parse_options=pa_csv.ParseOptions(
            delimiter=t.delimiter, newlines_in_values=newlines_in_values
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types=types,
            include_columns=list(types),
            null_values=[""],
            decimal_point=t.decimal,
            strings_can_be_null=False,  # an empty id is text, checked by the caller
            quoted_strings_can_be_null=True,  # so "" in a number column is "empty"
        ),
    )


def _read_integers(t: Table, types: dict[str, pa.DataType]) -> pa.Table:
    """``_read``, with integer columns read as floats, for the caller to check whole: Arrow's
    integer parsing also takes hexadecimal (``0x1F`` would be rank 31), its float parsing
    refuses it. Values past 2^53, where floats are inexact, are then read as integers once
    more (the float read has shown that no value is hexadecimal). Floats read as fast as text
    (10M rows of four columns: 0.43-0.55 s either way) and need no parse after it: the
    caller checks them whole in one cast (``load._small_ranks``)."""
    ints = [name for name, typ in types.items() if pa.types.is_integer(typ)]
    table = _read(t, {n: pa.float64() if n in ints else typ for n, typ in types.items()})
    for name in ints:
        whole = table.column(name)
        if whole.null_count == 0 and len(whole):
            low, high = pc.min_max(whole).values()
            if max(abs(low.as_py()), abs(high.as_py())) >= 2**53:
                exact = _exact_integers(t, name)
                if exact is not None:
                    table = table.set_column(table.column_names.index(name), name, exact)
    return table


def _exact_integers(t: Table, name: str) -> pa.ChunkedArray | None:
    """One column read as integers (its values already read as floats: no hex among
    them), or None when one is not an integer written out (``1e20``)."""
    try:
        return pa_csv.read_csv(t.source(), **_options(t, {name: pa.int64()})).column(name)
    except (pa.ArrowException, OSError, EOFError):
        return None


def _read(t: Table, types: dict[str, pa.DataType], newlines: bool = False) -> pa.Table:
    options = _options(t, types, newlines)
    try:
        return pa_csv.read_csv(t.source(), **options)
    except pa.ArrowInvalid as exc:
        message = one_line(exc)
        if "invalid UTF8" in message or "invalid utf8" in message.lower():
            raise t.not_utf8() from None
        if "conversion error" not in message:
            if not newlines:  # a quoted value may hold a line break: the slower parse
                return _read(t, types, newlines=True)
            raise InputError(t.label, f"cannot parse: {message}") from None
    except (pa.ArrowException, OSError, EOFError) as exc:
        raise InputError(t.label, f"cannot read: {one_line(exc)}") from None
    # A value did not convert: read the numeric columns as text to say which rows and why.
    as_text: dict[str, pa.DataType] = {name: pa.string() for name in types}
    table = pa_csv.read_csv(t.source(), **_options(t, as_text, newlines))
    for name, typ in types.items():
        if pa.types.is_floating(typ):
            raise_non_numeric(t.label, name, table.column(name), decimal=None
                              if t.decimal == "," else own_option("decimal", t.role))
    raise InputError(t.label, f"cannot read: {message}")
