"""Bytes to tables: CSV, TSV, TREC run/qrels, JSON, JSON Lines (any of them gzipped) and Parquet,
from a path or standard input.

Readers know formats, not meaning: the caller names the columns it wants and their types.
A value that does not convert is reported with the file, the column and example rows.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json

from rankeval.errors import InputError, OptionError
from rankeval.io.cast import ID, cast_columns, numbered_ids, raise_non_numeric, text_integers
from rankeval.io.formats import STDIN, UNITS, detect_format

_BLOCK_BYTES = 4 << 20  # both cores busy on small files; big ones 5-25% faster than 16 MiB
_SMALL = 4 << 20  # bytes of text under which ids are read as plain text without a look
_LOOK_BYTES = 64 << 10  # the look: about 2,000 rows, parsed in a millisecond


def _parquet():
    """pyarrow.parquet, imported when a Parquet file is read (it brings pyarrow.fs and ssl:
    about 25 ms of every CSV run otherwise)."""
    import pyarrow.parquet

    return pyarrow.parquet

_DELIMITERS = {"csv": ",", "tsv": "\t"}
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Source:
    """Where a table came from, for messages and reports."""

    path: str  # as given; "-" for standard input
    format: str
    rows: int

    @property
    def label(self) -> str:
        return "<stdin>" if self.path == STDIN else self.path

    @property
    def unit(self) -> str:
        """What error messages count: ``row``, ``line`` or ``entry``."""
        return UNITS.get(self.format, "row")


class Table:
    """An opened input: its column names, and a way to read chosen columns with chosen types."""

    def __init__(
        self, path: str, fmt: str, stdin: BinaryIO | None = None, role: str = "predictions",
        delimiter: str | None = None, encoding: str | None = None,
    ):
        self.path = path
        self.format = fmt
        self.role = role
        self.label = "<stdin>" if path == STDIN else path
        self.unit = UNITS.get(fmt, "row")  # how errors count rows
        self.delimiter = delimiter or _DELIMITERS.get(fmt, ",")
        self._delimiter_given = delimiter is not None
        self._buffer: bytes | None = None
        self._gzip = False
        self._parsed: pa.Table | None = None  # formats parsed whole on opening
        if path == STDIN:
            if stdin is None and sys.stdin is None:
                raise InputError(self.label, "standard input is closed")
            self._read_stream(stdin or sys.stdin.buffer, "standard input is empty")
        elif self._check_path() or not _encodable(path):
            # a FIFO, /dev/stdin, a process substitution (a stream), or a name Arrow cannot
            # take (not UTF-8): read through Python
            try:
                with open(path, "rb") as fh:
                    self._read_stream(fh, "is empty (nothing came through it)")
            except OSError as exc:
                raise InputError(self.label, f"cannot read: {one_line(exc)}") from None
        self._decode(encoding)
        if fmt in ("trec", "json", "jsonl"):
            self._parsed = self._parse()
            self.columns = list(self._parsed.column_names)
        else:
            self.columns = self._read_columns()

    def _bytes(self) -> bytes:
        try:
            with self._open() as fh:
                return fh.read()
        except (OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot read: {one_line(exc)}") from None

    def _parse(self) -> pa.Table:
        try:
            return self._parse_whole()
        except pa.ArrowInvalid as exc:  # TREC text Arrow could not hold
            if "utf8" in str(exc).lower():
                raise self.not_utf8() from None
            raise

    def _parse_whole(self) -> pa.Table:
        if self.format == "trec":
            from rankeval.io.trec import parse_trec

            return parse_trec(self._bytes(), self.role, self.label)
        if self.format == "json":
            from rankeval.io.jsonfmt import parse_json

            return parse_json(self._bytes(), self.role, self.label)
        data = self._bytes()
        try:
            # pyarrow-stubs: read_json takes paths and Python files; pyarrow also its own
            return pa_json.read_json(pa.BufferReader(data))  # type: ignore[arg-type]
        except pa.ArrowException:
            from rankeval.io.jsonfmt import parse_jsonl_leniently

            # Arrow's own message counts rows from 0 and names no value: read it again line
            # by line, so that the checks name lines from 1, as they do for every format.
            return parse_jsonl_leniently(data, self.label)

    def _gunzip(self, data: bytes) -> bytes:
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot decompress gzip data: {exc}") from None

    def _read_stream(self, fh: BinaryIO, empty: str) -> None:
        data = fh.read()
        if data[:2] == _GZIP_MAGIC:
            data = self._gunzip(data)
        if not data:
            raise InputError(self.label, empty)
        self._buffer = data

    def _check_path(self) -> bool:
        """Check a named input; True when it is a stream rather than a regular file."""
        p = Path(self.path)
        if not p.exists():
            raise InputError(self.label, "no such file")
        if p.is_dir():
            raise InputError(self.label, "is a directory, not a file")
        if not os.access(p, os.R_OK):
            raise InputError(self.label, "permission denied")
        if not stat.S_ISREG(p.stat().st_mode):
            return True
        if p.stat().st_size == 0:
            raise InputError(self.label, "file is empty")
        # Trust the bytes, not the name: `run.txt` may be gzip and `run.csv.gz` may be plain.
        with open(p, "rb") as fh:
            self._gzip = fh.read(2) == _GZIP_MAGIC
        return False

    def _decode(self, encoding: str | None) -> None:
        """Text in another encoding (``encoding``, or UTF-16 known by its byte-order mark) is
        transcoded to UTF-8 in memory; UTF-8 itself is read as it is."""
        if self.format == "parquet":
            return
        head = self._buffer[:2] if self._buffer is not None else self._head(2)
        if not encoding and head in (b"\xff\xfe", b"\xfe\xff"):
            encoding = "utf-16"
        if not encoding or codecs.lookup(encoding).name == "utf-8":
            return
        data = self._buffer if self._buffer is not None else self._bytes()
        try:
            self._buffer = data.decode(encoding).encode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise InputError(self.label, f"line {line} is not valid {encoding} text") from None
        self._gzip = False

    def not_utf8(self) -> InputError:
        """The error for text that is not UTF-8, naming the first bad line (error path)."""
        data = self._bytes()
        try:
            data.decode("utf-8")
            where = ""
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            where = f" at {self.unit if self.unit != 'entry' else 'line'} {line}"
            if self.unit == "row":  # rows are counted after the header
                where = f" at row {line - 1}" if line > 1 else " in the header"
            where += f" ({data[exc.start:exc.start + 4]!r})"
        return InputError(self.label, f"holds bytes that are not UTF-8 text{where}; name "
                          "its encoding with {opt:encoding} (for example latin-1)")

    def _head(self, n: int) -> bytes:
        with self._open() as fh:
            return fh.read(n)

    def _open(self) -> io.BufferedIOBase:
        if self._buffer is not None:
            return io.BytesIO(self._buffer)
        if self._gzip:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")

    def _read_columns(self) -> list[str]:
        if self.format == "parquet":
            try:
                return list(_parquet().read_schema(self._source()).names)
            except (pa.ArrowException, OSError) as exc:
                raise InputError(
                    self.label, f"not a readable Parquet file ({one_line(exc)})"
                ) from None
        try:
            with self._open() as fh:
                first = fh.readline(1 << 20)
        except (OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot read: {one_line(exc)}") from None
        text = first.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
        if not text.strip():
            raise InputError(
                self.label, "file is empty" if not first else "the header line is empty"
            )
        if not self._delimiter_given and self.format == "csv" and "," not in text and ";" in text:
            self.delimiter = ";"  # a spreadsheet export in a comma-decimal locale
        try:
            return next(csv.reader([text], delimiter=self.delimiter))
        except csv.Error as exc:
            raise InputError(self.label, f"cannot read the header line: {exc}") from None

    def _source(self):
        if self._buffer is not None:
            return pa.BufferReader(self._buffer)
        if self.format != "parquet":
            # Explicit compression: Arrow would otherwise guess it from the extension.
            return pa.input_stream(self.path, compression="gzip" if self._gzip else None)
        return self.path

    def nested(self, name: str) -> pa.ChunkedArray | None:
        """A list-typed column as stored (Parquet item vectors), or None when the column is
        flat or the format has no nested types."""
        if self._parsed is not None:
            col = self._parsed.column(name)
            return col if pa.types.is_nested(col.type) else None
        if self.format != "parquet":
            return None
        try:
            if not pa.types.is_nested(_parquet().read_schema(self._source()).field(name).type):
                return None
            return _parquet().ParquetFile(self._source()).read(columns=[name]).column(name)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(self.label, f"not a readable Parquet file ({one_line(exc)})") from None

    def read(self, types: dict[str, pa.DataType]) -> pa.Table:
        """Read just the columns in ``types`` (which must exist), converted to those types."""
        if self._parsed is not None:
            return cast_columns(self._parsed.select(list(types)), types, self.label, self.unit)
        if self.format == "parquet":
            table = self._read_parquet(types)
        else:
            table = self._read_csv_integers(self._plain_numbered_ids(types))
        # The parser's buffers go back to the system now where the pool can say so at once
        # (mimalloc, glibc); jemalloc, the command line's, returns them by its timed decay.
        pa.default_memory_pool().release_unused()
        return table

    def _plain_numbered_ids(self, types: dict[str, pa.DataType]) -> dict[str, pa.DataType]:
        """Ids that look numbered in the first 64 KiB (``7``, ``tt0111161``: ``numbered_ids``)
        are read as plain text, however often they repeat: hashing every row into a
        dictionary per block while parsing costs more than ``factorize`` then spends reading
        them as numbers (1M users x 10 rows: the read 0.54 -> 0.45 s, the users' encoding,
        beside the items', 0.11 -> 0.15 s)."""
        ids = [name for name, typ in types.items() if typ == ID]
        if not ids:
            return types
        if self._size() <= _SMALL:  # the look would cost as much as any saving
            return {name: pa.string() if typ == ID else typ for name, typ in types.items()}
        try:
            head = self._head(_LOOK_BYTES)
            head = head[: head.rfind(b"\n") + 1]
            options = self._csv_options({name: pa.string() for name in ids})
            # pyarrow-stubs: read_csv takes paths and Python files; pyarrow also its own
            sample = pa_csv.read_csv(pa.BufferReader(head), **options)  # type: ignore[arg-type]
        except (pa.ArrowException, OSError, EOFError, ValueError):
            return types  # the full read says what is wrong
        plain = {name for name in ids if numbered_ids(sample.column(name)) is not None}
        return {name: pa.string() if name in plain else typ for name, typ in types.items()}

    def _size(self) -> float:
        """Bytes of the text to parse (infinite when unknown: gzip)."""
        if self._buffer is not None:
            return len(self._buffer)
        return float("inf") if self._gzip else os.path.getsize(self.path)

    def _csv_options(self, types: dict[str, pa.DataType], newlines_in_values: bool = False):
        return dict(
            read_options=pa_csv.ReadOptions(use_threads=True, block_size=_BLOCK_BYTES),
            parse_options=pa_csv.ParseOptions(
                delimiter=self.delimiter, newlines_in_values=newlines_in_values
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                include_columns=list(types),
                null_values=[""],
                strings_can_be_null=False,  # an empty id is text, checked by the caller
                quoted_strings_can_be_null=True,  # so "" in a number column is "empty"
            ),
        )

    def _read_csv_integers(self, types: dict[str, pa.DataType]) -> pa.Table:
        """``_read_csv``, with integer columns read as text and parsed here: Arrow's integer
        parsing also takes hexadecimal (``0x1F`` would be rank 31), so text with an x is not
        given to it. A column that does not parse (fractions, empty cells, hex) is read again
        as floats, which refuse hex, for the caller to check; values past 2^53, where floats
        are inexact, are then read as integers once more."""
        ints = [name for name, typ in types.items() if pa.types.is_integer(typ)]
        table = self._read_csv({n: pa.string() if n in ints else t for n, t in types.items()})
        for name in ints:
            whole = text_integers(table.column(name))
            if whole is None:
                whole = self._read_csv({name: pa.float64()}).column(name)
                if whole.null_count == 0 and len(whole):
                    low, high = pc.min_max(whole).values()
                    if max(abs(low.as_py()), abs(high.as_py())) >= 2**53:
                        whole = self._exact_integers(name) or whole
            table = table.set_column(table.column_names.index(name), name, whole)
        return table

    def _exact_integers(self, name: str) -> pa.ChunkedArray | None:
        """One column read as integers (its values already read as floats: no hex among
        them), or None when one is not an integer written out (``1e20``)."""
        try:
            return pa_csv.read_csv(self._source(), **self._csv_options(
                {name: pa.int64()})).column(name)
        except (pa.ArrowException, OSError, EOFError):
            return None

    def _read_csv(self, types: dict[str, pa.DataType], newlines: bool = False) -> pa.Table:
        options = self._csv_options(types, newlines)
        try:
            return pa_csv.read_csv(self._source(), **options)
        except pa.ArrowInvalid as exc:
            message = one_line(exc)
            if "invalid UTF8" in message or "invalid utf8" in message.lower():
                raise self.not_utf8() from None
            if "conversion error" not in message:
                if not newlines:  # a quoted value may hold a line break: the slower parse
                    return self._read_csv(types, newlines=True)
                raise InputError(self.label, f"cannot parse: {message}") from None
        except (pa.ArrowException, OSError, EOFError) as exc:
            raise InputError(self.label, f"cannot read: {one_line(exc)}") from None
        # A value did not convert: read the numeric columns as text to say which rows and why.
        as_text: dict[str, pa.DataType] = {name: pa.string() for name in types}
        table = pa_csv.read_csv(self._source(), **self._csv_options(as_text, newlines))
        for name, typ in types.items():
            if pa.types.is_floating(typ):
                raise_non_numeric(self.label, name, table.column(name))
        raise InputError(self.label, f"cannot read: {message}")

    def _read_parquet(self, types: dict[str, pa.DataType]) -> pa.Table:
        try:
            schema = _parquet().read_schema(self._source())
        except (pa.ArrowException, OSError) as exc:
            raise InputError(self.label, f"not a readable Parquet file ({one_line(exc)})") from None
        for name in types:
            kind = schema.field(name).type
            if pa.types.is_nested(kind):  # read_dictionary cannot take them: say so first
                raise InputError(self.label, f"values of type {kind}: a flat column is needed",
                                 column=name)
        try:
            # ParquetFile.read, unlike pq.read_table, does not import pandas (0.2 s).
            # Ids come out dictionary-encoded straight from the file's own dictionary pages.
            ids = [name for name, typ in types.items() if typ == ID]
            table = _parquet().ParquetFile(self._source(), read_dictionary=ids).read(
                columns=list(types), use_threads=True
            )
        except (pa.ArrowException, OSError) as exc:
            raise InputError(
                self.label, f"not a readable Parquet file ({one_line(exc)})"
            ) from None
        return cast_columns(table, types, self.label)


def _encodable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # bytes of another encoding in the name
        return False
    return True


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def open_table(
    path: str | os.PathLike,
    fmt: str | None = None,
    flag: str = "--format",
    stdin: BinaryIO | None = None,
    role: str = "predictions",
    delimiter: str | None = None,
    encoding: str | None = None,
) -> Table:
    """Open ``path`` ("-" for standard input) as a table in ``fmt`` (default: by extension).

    ``role`` picks the layout of formats that differ for a run and the truth (TREC, JSON);
    ``delimiter`` overrides CSV's comma (a header with ``;`` and no comma is read with ``;``);
    ``encoding`` names a text encoding other than UTF-8 (``latin-1``).
    """
    path = os.fspath(path)
    if encoding:
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise OptionError(f"{{option}}: unknown encoding {encoding!r}", "encoding") from None
    if delimiter is not None and len(delimiter) != 1:
        raise OptionError(f"{{option}} must be one character, got {delimiter!r}", "delimiter")
    return Table(path, detect_format(path, fmt, flag), stdin=stdin, role=role,
                 delimiter=delimiter, encoding=encoding)


